package store

// The one rule of what a child session is to its parent (issue 35 item 8:
// "one branch/delegate/reset rule used by every surface"). sessiondb
// decides the kind once, when the link is made (CreateSession's Kind,
// PublishCompressionChild, an import's kind, hermes's markers), and stores
// it in parent_kind; every surface then asks these methods, never a
// kind literal of its own. The session lists' SQL
// (queries/sidebar.sql, pg/queries/sidebar.sql) and the lineage walk
// (queries/lineage.sql) spell the same rule as literals — SQL cannot call
// Go — and storetest's ChildKindRule_EverySurface pins every surface,
// SQL and Go, to these answers for every kind.
//
//	kind          continues  own conversation  listed  dies with parent
//	compression   yes        no                yes*    no
//	branch        no         yes               yes     no
//	reset         no         yes               yes     no
//	delegate      no         yes               no      yes
//	tool          no         yes               no      no
//	"" (unknown)  no         yes               yes     no
//
// * a compression child is listed, and with RecentQuery.Conversations its
// ancestors are not: the conversation shows once, at its tip.

// Continues reports whether a child of kind k carries its parent's conversation on
// — the lineage walk, the compression tip, resume, the display transcript,
// the shared turn lease and picker status, lineage-wide flags and the
// conversation's last activity follow it. Only a compression continuation
// does; a branch, reset, delegate or tool child starts a conversation of
// its own.
func (k ChildKind) Continues() bool { return k == ChildCompression }

// Listed reports whether a session of kind k shows in a session list without
// RecentQuery.IncludeChildren. A delegate's and a tool's sessions are an
// agent's work, not a conversation a person had; a delegate stays out
// even once its parent is gone (Session.DelegatedFrom).
func (k ChildKind) Listed() bool { return k != ChildDelegate && k != ChildTool }

// DiesWithParent reports whether deleting the parent deletes a child of kind k too
// (DeleteSession's cascade, DeletionSet, bulk deletes by id). A delegate
// lives and dies with the session it worked for; every other child is
// kept and unlinked.
func (k ChildKind) DiesWithParent() bool { return k == ChildDelegate }
