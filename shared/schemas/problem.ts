import { z } from "../z.js";

/** Every `code` an API error can carry; clients may switch on it. */
export const ErrorCode = z
  .enum([
    "bad_request",
    "validation_failed",
    "malformed_json",
    "unsupported_media_type",
    "unauthorized",
    "forbidden",
    "not_found",
    "method_not_allowed",
    "conflict",
    "node_exists",
    "state_behind",
    "join_token_invalid",
    "precondition_failed",
    "payload_too_large",
    "unavailable",
    "internal",
  ])
  .openapi("ErrorCode");
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ProblemField = z
  .object({
    path: z.string().openapi({ example: "inventory.gpus.0.uuid" }),
    message: z.string().openapi({ example: "Invalid input: expected string, received number" }),
  })
  .openapi("ProblemField");

/** RFC 9457 problem details, the body of every error of the control API. */
export const Problem = z
  .object({
    type: z.string().openapi({ example: "urn:llmgw:problem:validation_failed" }),
    title: z.string().openapi({ example: "Validation failed" }),
    status: z.number().int().openapi({ example: 400 }),
    detail: z.string().openapi({ example: "inventory.gpus.0.uuid: Invalid input: expected string, received number" }),
    code: ErrorCode,
    requestId: z.string().openapi({ example: "req_5Yq2c1tH8kLwZp0a" }),
    errors: z.array(ProblemField).optional(),
  })
  .openapi("Problem");
export type Problem = z.infer<typeof Problem>;
