// The router speaks OpenAI's error shape on /v1/* (never problem+json): {"error": {message, type, param, code}}.

export type OpenAiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "server_error"
  | "service_unavailable";

/** The error body OpenAI clients understand. */
export const openAiError = (message: string, type: OpenAiErrorType, code: string) => ({
  error: { message, type, param: null, code },
});
