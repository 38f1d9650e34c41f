package main

import (
	"context"
	"fmt"
	"log"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
)

func main() {
	ctx := context.Background()
	c, err := sessiond.New() // the workspace of the current folder; starts a daemon if none runs
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Append(ctx, &pb.AppendRequest{SessionId: "demo", Messages: []*pb.Message{
		sessiond.User("list the files"),
		sessiond.Assistant("", sessiond.Call("call_1", "bash", `{"cmd": "ls"}`)),
		sessiond.ToolResult("call_1", "a.txt b.txt"),
	}})
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range loaded.Messages {
		fmt.Println(m.GetPosition(), m.GetRole(), m.GetContent())
	}
}
