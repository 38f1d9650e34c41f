// Command harness is a scripted agent turn on claw-sessiond: a user question, an assistant tool
// call, the tool (which takes $CLAW_HARNESS_TOOL_S seconds, default 1), its result and the
// answer. Killed in the middle of the tool, it shows on its next start the history with the
// daemon's repair: an "interrupted" result right after the call, and no tool run twice.
//
//	go run ./examples/harness <workspace> <session-id>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	"github.com/claw-sessiond/claw-sessiond/clients/go/harness"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: harness <workspace> <session-id>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func run(workspace, id string) error {
	ctx := context.Background()
	client, err := sessiond.New(sessiond.WithWorkspace(workspace))
	if err != nil {
		return err
	}
	defer client.Close()
	session, err := harness.NewManager(client).GetOrCreate(ctx, id, workspace)
	if err != nil {
		return err
	}
	defer session.Close(ctx)
	out := json.NewEncoder(os.Stdout)
	for _, m := range session.WorkingMemory() {
		_ = out.Encode(m)
	}
	if len(session.WorkingMemory()) > 0 {
		fmt.Println("resumed")
		return session.Append(ctx, harness.Message{Role: "user", Content: "what happened?"},
			harness.Message{Role: "assistant", Content: "The listing was interrupted; I will ask before running it again."})
	}
	call := harness.ToolCall{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`)}
	if err := session.Append(ctx, harness.Message{Role: "user", Content: "list the files"},
		harness.Message{Role: "assistant", ToolCalls: []harness.ToolCall{call}}); err != nil {
		return err
	}
	fmt.Println("tool started")
	seconds, err := strconv.ParseFloat(os.Getenv("CLAW_HARNESS_TOOL_S"), 64)
	if err != nil {
		seconds = 1
	}
	time.Sleep(time.Duration(seconds * float64(time.Second)))
	if err := session.Append(ctx, harness.Message{Role: "tool", ToolCallID: call.ID, Content: "a.txt b.txt"},
		harness.Message{Role: "assistant", Content: "There are two files."}); err != nil {
		return err
	}
	if err := session.RecordUsage(ctx, 120, 30, 0, ""); err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}
