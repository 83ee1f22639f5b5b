/** Method names and wire shapes of the daemon's custom JSON-RPC methods (design §6), mirrored
 * once from `server/nous/protocol.py`. camelCase on the wire. No `vscode` import: pure. */

export const NOUS_CONTEXT = "nous/context";
export const NOUS_RECALL = "nous/recall";
export const NOUS_REMEMBER = "nous/remember";
export const NOUS_FEEDBACK = "nous/feedback";
export const NOUS_TURN = "nous/turn";
export const NOUS_FORGET_SESSION = "nous/forgetSession";
export const NOUS_EXPAND = "nous/expand";
export const NOUS_FORGET = "nous/forget";
export const NOUS_SUPERSEDE = "nous/supersede";
export const NOUS_OUTCOME = "nous/outcome";
export const NOUS_STATUS = "nous/status";
export const NOUS_STATS = "nous/stats";
export const NOUS_BUDGET = "nous/budget";
export const NOUS_INDEXED = "nous/indexed";

export interface Message {
  role: "user" | "assistant" | "system" | "tool";
  content: string;
}

export interface ContextParams {
  input: string;
  mode: "startup" | "turn";
  sessionId?: string;
  conversation?: Message[];
  frame?: string;
  profile?: string;
  budget?: number;
  modelMaxTokens?: number;
  activeFile?: string;
  injectedInstructions?: string[];
  /** Only show what would be injected (Show Context for…, `@nous /context`): no chat turn is kept
   * and the session records no injection. */
  preview?: boolean;
  /** The session is an agent's (an agent-mode model's tool call): the agent's recall limit and
   * session cap apply, fixed when the session is first opened. */
  agent?: boolean;
}

export interface RecallParams {
  query: string;
  sessionId?: string;
  kinds?: string[];
  scope?: string;
  budget?: number;
  /** The session is an agent's (an agent-mode model's tool call); see `ContextParams.agent`. */
  agent?: boolean;
}

export interface RememberParams {
  kind: string;
  content: string;
  scope?: string;
  tags?: string[];
  confidence?: number;
  importance?: number;
  outcome?: "success" | "partial" | "pending" | "failure";
  source?: string;
}

export interface FeedbackParams {
  sessionId: string;
  response: string;
}

export interface Item {
  id: string;
  kind: string;
  scope: string;
  layer: string;
  detail: "summary" | "micro" | "content";
  tokens: number;
  score: number;
  terms: Record<string, number>;
  text: string;
  source: string;
}

export interface Dropped {
  id: string;
  kind: string;
  reason: string;
  score: number;
  detail: string;
}

export interface Section {
  layer: string;
  title: string;
  used: number;
  cap: number;
  items: Item[];
}

export interface SessionUse {
  id: string | null;
  used: number;
  cap: number;
  remaining: number;
  recalls: number;
  cut: boolean;
}

export interface ContextResult {
  text: string;
  tokens: number;
  budget: number;
  frame: string;
  mode: string;
  intent: { task?: string; [key: string]: unknown };
  sections: Section[];
  dropped: Dropped[];
  session: SessionUse;
  fingerprint: Record<string, unknown>;
  refresh: string | null;
  notes: string[];
  /** Set when a limit refused this request (`maxRecallsPerSession`, the session cap…): which one,
   * the count, and what to tell the user. Absent from daemons that do not send it. */
  limit?: Limit | null;
}

/** A recall or context limit reached (`nous/recall`, `nous/context`). */
export interface Limit {
  /** The setting or cap that refused, e.g. `maxRecallsPerSession`, `sessionCap`. */
  name: string;
  used: number;
  max: number;
  message: string;
}

export interface RememberResult {
  id: string;
  status: "created" | "confirmed";
  memoryStatus: string;
  scope: string;
  redactions: string[];
}

export interface FeedbackResult {
  sessionId: string;
  referenced: string[];
  notReferenced: string[];
  overlaps: Record<string, number>;
}

/** `nous/turn`: one chat turn to keep (design §10); the daemon applies the capture setting and rules. */
export interface TurnParams {
  sessionId: string;
  role: "user" | "assistant";
  text: string;
  index?: number;
  /** Set when the text is a language-model tool's input: a `nous_recall` query is never kept; of a
   * `nous_context` task only the session notes it states are kept. */
  tool?: ToolName;
}

/** The tools whose input the daemon hears of as a turn. */
export type ToolName = "nous_context" | "nous_recall";

export interface TurnResult {
  sessionId: string;
  stored: boolean;
  /** Kept for its own session's window only (a turn that only asks). */
  sessionOnly?: boolean;
  id?: string | null;
  index?: number | null;
  notes: { id: string; tag: string; text: string }[];
}

/** `nous/forgetSession`: the session's turns and notes removed for good. */
export interface ForgetSessionResult {
  sessionId: string;
  forgotten: number;
}

export interface ForgetResult {
  id: string;
  status: string;
  [key: string]: unknown;
}

export interface StatusResult {
  project: string;
  projectSource?: string;
  languages: string[];
  database?: string;
  memories?: number;
  model?: string;
  encoding?: string;
  /** Whether chat turns and session notes are kept (the `capture` setting). */
  capture?: boolean;
  [key: string]: unknown;
}

export interface LayerUse {
  layer: string;
  used: number;
  cap: number;
}

export interface BudgetNotification {
  sessionId: string | null;
  used: number;
  cap: number;
  layers: LayerUse[];
  project: string;
  /** The answering project's team store (design §13); `slow` / `down`: that answer was local only. */
  team?: TeamState;
}

export type TeamState = "off" | "up" | "connecting" | "slow" | "down";

export const NOUS_LIST = "nous/list";
export const NOUS_UPDATE = "nous/update";

export type SourceType = "file" | "commit" | "chat" | "manual";
export type Outcome = "success" | "partial" | "pending" | "failure";

export interface ListParams {
  query?: string;
  kinds?: string[];
  scope?: string;
  statuses?: string[];
  sourceTypes?: SourceType[];
  since?: string;
  pinned?: boolean;
  review?: boolean;
  /** `true`: only what chat captured on its own (turns, session notes); `false`: only project
   * knowledge (harvested, committed, remembered on purpose). */
  captured?: boolean;
  ids?: string[];
  history?: boolean;
  sort?: "recent" | "use" | "score";
  offset?: number;
  limit?: number;
  activeFile?: string;
}

export interface UpdateParams {
  id: string;
  content?: string;
  kind?: string;
  scope?: string;
  tags?: string[];
  pinned?: boolean;
  importance?: number;
  outcome?: Outcome;
  status?: string;
  reviewed?: boolean;
  activeFile?: string;
}

export interface UsageEntry {
  sessionId: string;
  at: string;
  referenced: boolean;
  overlap: number;
}

export interface TransitionEntry {
  fromStatus: string | null;
  toStatus: string;
  at: string;
  reason: string;
}

export interface ListedMemory {
  id: string;
  kind: string;
  scope: string;
  status: string;
  content: string;
  summary: string;
  micro: string;
  source: string;
  sourceType: SourceType;
  createdAt: string;
  updatedAt: string;
  statusChangedAt: string;
  confidence: number;
  importance: number;
  outcome: string | null;
  confirmations: number;
  activations: number;
  supersededBy: string | null;
  tags: string[];
  pinned: boolean;
  reviewed: boolean;
  /** Captured from a chat on its own (a turn or a session note), not project knowledge. Absent
   * from daemons that do not send it. */
  captured?: boolean;
  excluded: boolean;
  nextStatuses: string[];
  injected: number;
  referenced: number;
  lastInjectedAt: string | null;
  lastReferencedAt: string | null;
  usage: UsageEntry[] | null;
  transitions: TransitionEntry[] | null;
}

export interface ListResult {
  items: ListedMemory[];
  total: number;
  offset: number;
  nextOffset: number | null;
  reviewPending: number;
  project: string;
  projectScope: string;
}

export interface UpdateResult {
  memory: ListedMemory;
  changed: string[];
  reembedded: boolean;
  redactions: string[];
}
