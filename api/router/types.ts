// What the OpenAI-compatible router needs from outside, built once per API instance by the Node entry (and by tests):
// the endpoint table, API keys, limits, usage, the upstream client and metrics. Nothing here is a module singleton.

/** One ready replica a model's requests can go to (its rank 0's HTTP endpoint). */
export type Endpoint = { replicaId: string; deployment: string; model: string; url: string };

/** An API key as the router checks it; `models` absent means every model. */
export type ApiKeyInfo = {
  name: string;
  models?: string[];
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  expiresAt?: number;
};

/** Why a request may not go on now (a limit of its key), or that it may. */
export type LimitDecision = { ok: true } | { ok: false; retryAfterS: number; limit: "requests" | "tokens" };

export type KeyStore = {
  /** The key a presented secret belongs to (expired keys included: the caller checks), or undefined. */
  identify(secret: string): Promise<ApiKeyInfo | undefined>;
};

export type Limiter = {
  /** Takes one request from the key's per-minute budget, refusing when its requests or tokens are spent. */
  admit(key: ApiKeyInfo, now: number): LimitDecision;
  /** Counts tokens a finished response used against the key's per-minute token budget. */
  spend(key: ApiKeyInfo, tokens: number, now: number): void;
};

export type Usage = { promptTokens: number; completionTokens: number };

export type UsageRecorder = {
  /** Adds one response's usage in memory; written to the database in batches, never per request. */
  record(key: string, model: string, usage: Usage, now: number): void;
  /** Writes what is pending now (also called on shutdown). */
  flush(): Promise<void>;
};
