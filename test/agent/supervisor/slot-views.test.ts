import { describe, expect, it } from "vitest";
import { redactArgv } from "../../../agent/supervisor/slot-views.js";

describe("redactArgv", () => {
  it("hides the values of secret-bearing flags, in both spellings, and keeps the rest", () => {
    expect(
      redactArgv([
        "vllm",
        "serve",
        "/models/m",
        "--api-key",
        "s3cret",
        "--hf-token=hf_abc",
        "--port",
        "20001",
        "--max-model-len",
        "8192",
        "--tokenizer",
        "/models/tok",
        "--max-num-batched-tokens",
        "4096",
      ]),
    ).toEqual([
      "vllm",
      "serve",
      "/models/m",
      "--api-key",
      "***",
      "--hf-token=***",
      "--port",
      "20001",
      "--max-model-len",
      "8192",
      "--tokenizer",
      "/models/tok",
      "--max-num-batched-tokens",
      "4096",
    ]);
  });
});
