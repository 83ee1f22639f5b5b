/** `nous.*` settings → the daemon's `initializationOptions` (its pydantic `Settings`, camelCase
 * keys). Pure: the caller passes a reader over the configuration. */

/** Every `nous.*` setting in package.json, by its key under `nous.`, with its JSON type; the
 * daemon's field is the snake_case of the same name. */
export const SETTING_TYPES = {
  python: "string",
  db: "string",
  encoding: "string",
  embeddingModel: "string",
  recallBudget: "number",
  startupBudget: "number",
  sessionCap: "number",
  maxRecallsPerSession: "number",
  harvest: "boolean",
  watch: "boolean",
  capture: "boolean",
  teamStore: "string",
  teamTimeoutMs: "number",
} as const;

export const SETTING_KEYS = Object.keys(SETTING_TYPES) as (keyof typeof SETTING_TYPES)[];

export type SettingKey = keyof typeof SETTING_TYPES;
export type InitializationOptions = Partial<Record<SettingKey, string | number | boolean>>;

/** Reads one `nous.*` value; `undefined` when unset. */
export type SettingReader = (key: SettingKey) => unknown;

/** Settings a cloned workspace must not choose: the interpreter the extension executes, the
 * file every memory is read from and written to, and the team server shared memories are sent
 * to. Declared `"scope": "machine"` in package.json and read from user (or remote machine)
 * settings only, whatever a workspace says. */
export const MACHINE_ONLY: ReadonlySet<SettingKey> = new Set<SettingKey>(["python", "db", "teamStore"]);

/** The part of `WorkspaceConfiguration.inspect()` this module reads. */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The user's value of a setting (in a remote window: the remote machine's), else its default;
 * workspace, folder and language-specific values are ignored. */
export function userValue(inspected: Inspected | undefined): unknown {
  if (!inspected) return undefined;
  return inspected.globalValue !== undefined ? inspected.globalValue : inspected.defaultValue;
}

/** A reader over the configuration that takes `MACHINE_ONLY` settings from `inspect()` (user
 * values only) and the rest from `get()` (workspace values apply). */
export function trustedReader(config: {
  get(key: string): unknown;
  inspect(key: string): Inspected | undefined;
}): SettingReader {
  return (key) => (MACHINE_ONLY.has(key) ? userValue(config.inspect(key)) : config.get(key));
}

/** The options the daemon gets: every setting with a usable value. Empty strings mean "use the
 * daemon's default" and are left out; a value of the wrong type is left out too (the daemon
 * would reject it and keep its default anyway). */
export function initializationOptions(read: SettingReader): InitializationOptions {
  const options: InitializationOptions = {};
  for (const key of SETTING_KEYS) {
    const value = read(key);
    if (typeof value !== SETTING_TYPES[key]) continue;
    if (typeof value === "string") {
      const trimmed = value.trim();
      if (trimmed !== "") options[key] = trimmed;
    } else if (typeof value === "number" && Number.isFinite(value)) {
      options[key] = value;
    } else if (typeof value === "boolean") {
      options[key] = value;
    }
  }
  return options;
}

/** True when a configuration change touches a setting that needs a daemon restart. */
export function affectsDaemon(affects: (section: string) => boolean): boolean {
  return affects("nous");
}

/** The recall budget: the configured one, smaller when the caller gives a smaller token budget. */
export function recallBudget(configured: number, tokenBudget: number | undefined): number {
  if (typeof tokenBudget === "number" && Number.isFinite(tokenBudget) && tokenBudget > 0) {
    return Math.max(1, Math.min(configured, Math.floor(tokenBudget)));
  }
  return configured;
}
