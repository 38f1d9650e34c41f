package sessiond

import pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"

// Helpers that build the messages of a conversation.

// System is an instruction for the model.
func System(text string) *pb.Message { return &pb.Message{Role: pb.Role_ROLE_SYSTEM, Content: text} }

// User is a person's (or calling program's) turn.
func User(text string) *pb.Message { return &pb.Message{Role: pb.Role_ROLE_USER, Content: text} }

// Assistant is the model's turn, with its tool calls.
func Assistant(text string, calls ...*pb.ToolCall) *pb.Message {
	return &pb.Message{Role: pb.Role_ROLE_ASSISTANT, Content: text, ToolCalls: calls}
}

// Call is one tool call; arguments is JSON text.
func Call(id, name, arguments string) *pb.ToolCall {
	return &pb.ToolCall{Id: id, Name: name, Arguments: arguments}
}

// ToolResult answers the tool call callID.
func ToolResult(callID, text string) *pb.Message {
	return &pb.Message{Role: pb.Role_ROLE_TOOL, ToolCallId: callID, Content: text}
}
