// Package harness is a drop-in session manager for a Go agent harness whose sessions used to
// live in .claw/sessions/<id>.json files: the same shape (GetOrCreate, Append, RecordUsage,
// Clear, the working memory, token totals that survive Clear and restarts), stored by
// claw-sessiond instead.
//
// What the file-based manager did by hand, the daemon does: every change is durable before
// the call returns (no tmp + rename), a corrupt store is an error (never an empty session over
// it), and a tool call left without a result by a process that died is answered by a synthetic
// "interrupted" result inserted right after its assistant message (two such calls: in their
// order), never by running the tool again. While a Session is open it holds a run, so its own
// calls in flight are never repaired, however long a tool blocks.
//
// Old session files go in once with `claw-sessiond migrate-legacy .claw/sessions`.
package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
)

// ToolCall is one tool invocation of an assistant message.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is one entry of the conversation.
type Message struct {
	Role       string     `json:"role"` // "system", "user", "assistant" or "tool"
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Interrupted: a result the daemon wrote for a call whose process died before answering.
	Interrupted bool  `json:"interrupted,omitempty"`
	Position    int64 `json:"position,omitempty"`
}

// Totals are a session's token and cost totals, kept across Clear.
type Totals struct {
	PromptTokens     int64
	CompletionTokens int64
	CostMicros       int64
	Currency         string
}

// Manager opens sessions of one daemon.
type Manager struct {
	c *sessiond.Client
}

// NewManager returns a manager over a client (sessiond.New).
func NewManager(c *sessiond.Client) *Manager { return &Manager{c: c} }

// Session is one open session; its methods are safe for concurrent use. Close it when done.
type Session struct {
	ID        string
	WorkDir   string
	CreatedAt time.Time

	c       *sessiond.Client
	run     *sessiond.Run
	mu      sync.Mutex
	history []Message
	totals  Totals
}

var roles = map[string]pb.Role{"system": pb.Role_ROLE_SYSTEM, "user": pb.Role_ROLE_USER,
	"assistant": pb.Role_ROLE_ASSISTANT, "tool": pb.Role_ROLE_TOOL}

// GetOrCreate opens the session id for workDir (an absolute folder): its history with the
// daemon's repair applied and its totals, or an empty session (nothing is stored until the
// first change). It then attaches a run, so that only one process runs the session at a time
// (another gets sessiond.ReasonRunAlreadyOwned).
func (m *Manager) GetOrCreate(ctx context.Context, id, workDir string) (*Session, error) {
	if workDir == "" {
		return nil, errors.New("harness: GetOrCreate needs the session's working folder")
	}
	loaded, err := m.c.Load(ctx, &pb.LoadRequest{SessionId: id, Workdir: workDir})
	if err != nil {
		return nil, fmt.Errorf("harness: open session %q: %w", id, err)
	}
	run, err := m.c.Attach(ctx, id, sessiond.WithLabel("harness"))
	if err != nil {
		return nil, fmt.Errorf("harness: run session %q: %w", id, err)
	}
	s := &Session{ID: id, WorkDir: workDir, c: m.c, run: run}
	s.take(loaded)
	return s, nil
}

func (s *Session) take(loaded *sessiond.Loaded) {
	s.CreatedAt = loaded.Session.GetCreatedAt().AsTime()
	s.history = s.history[:0]
	for _, m := range loaded.Messages {
		s.history = append(s.history, fromPB(m))
	}
	u := loaded.Session.GetUsage()
	s.totals = Totals{u.GetInputTokens(), u.GetOutputTokens(), u.GetCostMicros(), u.GetCurrency()}
}

func fromPB(m *pb.Message) Message {
	out := Message{Role: strings.ToLower(strings.TrimPrefix(m.GetRole().String(), "ROLE_")), Content: m.GetContent(),
		ToolCallID: m.GetToolCallId(), Position: m.GetPosition(),
		Interrupted: m.GetSynthetic().GetReason() == pb.SyntheticReason_SYNTHETIC_REASON_INTERRUPTED}
	for _, c := range m.GetToolCalls() {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.GetId(), Name: c.GetName(), Arguments: json.RawMessage(c.GetArguments())})
	}
	return out
}

func toPB(m Message) (*pb.Message, error) {
	role, ok := roles[m.Role]
	if !ok {
		return nil, fmt.Errorf("harness: role %q is not system, user, assistant or tool", m.Role)
	}
	out := &pb.Message{Role: role, Content: m.Content, ToolCallId: m.ToolCallID}
	for _, c := range m.ToolCalls {
		args := string(c.Arguments)
		if args == "" {
			args = "{}"
		}
		out.ToolCalls = append(out.ToolCalls, &pb.ToolCall{Id: c.ID, Name: c.Name, Arguments: args})
	}
	return out, nil
}

// Append stores messages at the end of the history (durably, all or none) and adds them to
// the working memory. Tool calls appended here belong to the session's run.
func (s *Session) Append(ctx context.Context, msgs ...Message) error {
	req := &pb.AppendRequest{SessionId: s.ID, Workdir: s.WorkDir, RunId: s.run.ID}
	for _, m := range msgs {
		p, err := toPB(m)
		if err != nil {
			return err
		}
		req.Messages = append(req.Messages, p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resp, err := s.c.Append(ctx, req)
	if err != nil {
		return fmt.Errorf("harness: append to %q: %w", s.ID, err)
	}
	for i, m := range msgs {
		m.Position = resp.GetFirstPosition() + int64(i)
		s.history = append(s.history, m)
	}
	return nil
}

// RecordUsage adds one model call's tokens (and cost, in micro-units of currency) to the totals.
func (s *Session) RecordUsage(ctx context.Context, promptTokens, completionTokens, costMicros int64, currency string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.c.RecordUsage(ctx, &pb.RecordUsageRequest{SessionId: s.ID, Workdir: s.WorkDir, InputTokens: promptTokens,
		OutputTokens: completionTokens, CostMicros: costMicros, Currency: currency})
	if err != nil {
		return fmt.Errorf("harness: record usage of %q: %w", s.ID, err)
	}
	s.totals = Totals{u.GetInputTokens(), u.GetOutputTokens(), u.GetCostMicros(), u.GetCurrency()}
	return nil
}

// Clear empties the history; the totals are kept (a budget is not reset by /clear).
func (s *Session) Clear(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.c.Clear(ctx, &pb.ClearRequest{SessionId: s.ID, Workdir: s.WorkDir}); err != nil {
		return fmt.Errorf("harness: clear %q: %w", s.ID, err)
	}
	s.history = nil
	return nil
}

// Reload reads the history and totals again from the daemon (others' writes, repairs).
func (s *Session) Reload(ctx context.Context) error {
	loaded, err := s.c.Load(ctx, &pb.LoadRequest{SessionId: s.ID, Workdir: s.WorkDir})
	if err != nil {
		return fmt.Errorf("harness: reload %q: %w", s.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.take(loaded)
	return nil
}

// WorkingMemory is the conversation to send to the model: a copy of the visible history, in
// conversation order, with the daemon's repairs in place.
func (s *Session) WorkingMemory() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.history...)
}

// Totals are the session's token and cost totals (kept across Clear).
func (s *Session) Totals() Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totals
}

// Close ends the session's run (confirmed): its calls still unanswered are then repaired by
// the next GetOrCreate.
func (s *Session) Close(ctx context.Context) error {
	_, err := s.run.End(ctx)
	return err
}
