// The router speaks OpenAI's error shape on /v1/* (never problem+json): {"error": {message, type, param, code}}.
import type { Context } from "hono";

export type OpenAiErrorType = "invalid_request_error" | "authentication_error" | "permission_error" | "not_found_error" | "rate_limit_error" | "server_error" | "service_unavailable";

/** The error body OpenAI clients understand. */
export const openAiError = (message: string, type: OpenAiErrorType, code: string) => ({ error: { message, type, param: null, code } });

/** An OpenAI-style error response. */
export function errorResponse(c: Context, status: 400 | 401 | 403 | 404 | 413 | 429 | 502 | 503 | 504, message: string, type: OpenAiErrorType, code: string, headers: Record<string, string> = {}) {
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  return c.json(openAiError(message, type, code), status);
}
