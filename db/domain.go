package db

import "github.com/sessiondb/sessiondb/store"

// The domain's names, so a SQLite user needs only this package. Each is
// package store's, documented there; TestDomainNamesAreAliased keeps
// this list complete.

type (
	AmbiguousIDError         = store.AmbiguousIDError
	Attention                = store.Attention
	AttentionKind            = store.AttentionKind
	Billing                  = store.Billing
	BulkFilter               = store.BulkFilter
	BulkOptions              = store.BulkOptions
	BulkResult               = store.BulkResult
	ChildKind                = store.ChildKind
	CommandReceipt           = store.CommandReceipt
	ClearOptions             = store.ClearOptions
	ClearResult              = store.ClearResult
	CompactResult            = store.CompactResult
	Compaction               = store.Compaction
	ContextMessage           = store.ContextMessage
	Continuation             = store.Continuation
	ContinuedError           = store.ContinuedError
	ConversationOptions      = store.ConversationOptions
	DeleteOptions            = store.DeleteOptions
	DisplayItem              = store.DisplayItem
	DisplayPage              = store.DisplayPage
	DisplayPageOptions       = store.DisplayPageOptions
	DuplicateToolResultError = store.DuplicateToolResultError
	Error                    = store.Error
	Execution                = store.Execution
	ExportOptions            = store.ExportOptions
	ExportResult             = store.ExportResult
	ForeignBatch             = store.ForeignBatch
	ForeignBatchResult       = store.ForeignBatchResult
	ForeignLink              = store.ForeignLink
	ForeignMessage           = store.ForeignMessage
	ForeignSession           = store.ForeignSession
	ForeignSessionRow        = store.ForeignSessionRow
	ForeignState             = store.ForeignState
	ForeignUsage             = store.ForeignUsage
	HandoffState             = store.HandoffState
	HandoffStatus            = store.HandoffStatus
	IdempotencyConflictError = store.IdempotencyConflictError
	ImportError              = store.ImportError
	ImportOptions            = store.ImportOptions
	ImportResult             = store.ImportResult
	ImportSkip               = store.ImportSkip
	KeepPolicy               = store.KeepPolicy
	Lease                    = store.Lease
	Mark                     = store.Mark
	Message                  = store.Message
	MessageQuery             = store.MessageQuery
	MessageState             = store.MessageState
	MessageWindow            = store.MessageWindow
	Migration                = store.Migration
	ModelSwitch              = store.ModelSwitch
	ModelUsage               = store.ModelUsage
	NewCommandReceipt        = store.NewCommandReceipt
	NewMessage               = store.NewMessage
	NewSession               = store.NewSession
	Part                     = store.Part
	PartType                 = store.PartType
	PickerStatus             = store.PickerStatus
	ProviderUsage            = store.ProviderUsage
	PruneResult              = store.PruneResult
	RecentPage               = store.RecentPage
	RecentQuery              = store.RecentQuery
	ReplaceOptions           = store.ReplaceOptions
	ResumePoint              = store.ResumePoint
	RewindOptions            = store.RewindOptions
	RewindResult             = store.RewindResult
	Role                     = store.Role
	Routing                  = store.Routing
	SchemaBehindError        = store.SchemaBehindError
	SchemaStatus             = store.SchemaStatus
	SearchHit                = store.SearchHit
	SearchOptions            = store.SearchOptions
	SearchSort               = store.SearchSort
	Session                  = store.Session
	SessionCounts            = store.SessionCounts
	SessionFilter            = store.SessionFilter
	SessionMatch             = store.SessionMatch
	SessionSummary           = store.SessionSummary
	SpareReason              = store.SpareReason
	Spared                   = store.Spared
	Summarizer               = store.Summarizer
	TitleInUseError          = store.TitleInUseError
	TitleRank                = store.TitleRank
	TreeUsage                = store.TreeUsage
	ToolCall                 = store.ToolCall
	TurnOutcome              = store.TurnOutcome
	TurnResult               = store.TurnResult
	Usage                    = store.Usage
	UsageFilter              = store.UsageFilter
	UsageUpdate              = store.UsageUpdate
	WorkspaceUpdate          = store.WorkspaceUpdate
)

const (
	AttentionApproval         = store.AttentionApproval
	AttentionNone             = store.AttentionNone
	AttentionQuestion         = store.AttentionQuestion
	AttentionUnknown          = store.AttentionUnknown
	AttentionValidation       = store.AttentionValidation
	ChildBranch               = store.ChildBranch
	ChildCompression          = store.ChildCompression
	ChildDelegate             = store.ChildDelegate
	ChildReset                = store.ChildReset
	ChildTool                 = store.ChildTool
	DefaultActivityPatience   = store.DefaultActivityPatience
	DefaultGhostAge           = store.DefaultGhostAge
	DefaultLeaseTTL           = store.DefaultLeaseTTL
	DefaultSearchLimit        = store.DefaultSearchLimit
	DefaultTranscriptPatience = store.DefaultTranscriptPatience
	DefaultWritePatience      = store.DefaultWritePatience
	DisplayHidden             = store.DisplayHidden
	ExecutionIdle             = store.ExecutionIdle
	ExecutionRunning          = store.ExecutionRunning
	ExecutionUnknown          = store.ExecutionUnknown
	HandoffCompleted          = store.HandoffCompleted
	HandoffFailed             = store.HandoffFailed
	HandoffNone               = store.HandoffNone
	HandoffPending            = store.HandoffPending
	HandoffRunning            = store.HandoffRunning
	MaxClockSkew              = store.MaxClockSkew
	MaxParts                  = store.MaxParts
	MaxSearchContext          = store.MaxSearchContext
	MaxSearchLimit            = store.MaxSearchLimit
	MaxUsageCostUSD           = store.MaxUsageCostUSD
	MaxUsageCount             = store.MaxUsageCount
	PartFile                  = store.PartFile
	PartImage                 = store.PartImage
	PartReasoning             = store.PartReasoning
	PartText                  = store.PartText
	PartToolResult            = store.PartToolResult
	PartToolUse               = store.PartToolUse
	RoleAssistant             = store.RoleAssistant
	RoleNote                  = store.RoleNote
	RoleSystem                = store.RoleSystem
	RoleTool                  = store.RoleTool
	RoleUser                  = store.RoleUser
	SortNewest                = store.SortNewest
	SortOldest                = store.SortOldest
	SortRelevance             = store.SortRelevance
	SpareContinued            = store.SpareContinued
	SpareLeased               = store.SpareLeased
	SparePinned               = store.SparePinned
	StateActive               = store.StateActive
	StateCompacted            = store.StateCompacted
	StateRewound              = store.StateRewound
	TitleDerived              = store.TitleDerived
	TitleGenerated            = store.TitleGenerated
	TitleUser                 = store.TitleUser
	TurnComplete              = store.TurnComplete
	TurnError                 = store.TurnError
	TurnInterrupted           = store.TurnInterrupted
)

// The sentinel errors: see package store for what each means.
var (
	ErrAliased             = store.ErrAliased
	ErrClosed              = store.ErrClosed
	ErrCommitUnknown       = store.ErrCommitUnknown
	ErrConflict            = store.ErrConflict
	ErrCoolingDown         = store.ErrCoolingDown
	ErrCorrupt             = store.ErrCorrupt
	ErrDiskFull            = store.ErrDiskFull
	ErrExists              = store.ErrExists
	ErrForeignSchema       = store.ErrForeignSchema
	ErrIO                  = store.ErrIO
	ErrIdempotencyConflict = store.ErrIdempotencyConflict
	ErrInvalidInput        = store.ErrInvalidInput
	ErrLeaseHeld           = store.ErrLeaseHeld
	ErrLeaseLost           = store.ErrLeaseLost
	ErrLocked              = store.ErrLocked
	ErrNotDatabase         = store.ErrNotDatabase
	ErrNotAStore           = store.ErrNotAStore
	ErrNotFound            = store.ErrNotFound
	ErrNotSupported        = store.ErrNotSupported
	ErrReadOnly            = store.ErrReadOnly
	ErrReplaced            = store.ErrReplaced
	ErrSchemaTooNew        = store.ErrSchemaTooNew
	ErrSchemaBehind        = store.ErrSchemaBehind
	ErrTooLarge            = store.ErrTooLarge
	ErrInternal            = store.ErrInternal
	ErrSessionClosed       = store.ErrSessionClosed
	ErrTooManyOpenFiles    = store.ErrTooManyOpenFiles
)

// PlainText is the plain-text form of a message's parts: see
// store.PlainText.
func PlainText(parts []Part) string { return store.PlainText(parts) }

// Retryable reports whether the call that returned err may be made again
// unchanged: see [store.Retryable].
func Retryable(err error) bool { return store.Retryable(err) }

// RetryableKeyed is Retryable for an append idempotent by key, for which
// ErrCommitUnknown is retryable too: see [store.RetryableKeyed].
func RetryableKeyed(err error) bool { return store.RetryableKeyed(err) }
