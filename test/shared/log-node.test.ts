import { describe, expect, it } from "vitest";
import { logSettings } from "../../shared/log-node.js";

describe("logSettings", () => {
  it("writes JSON lines unless stderr is a terminal or LLMGW_LOG_FORMAT says pretty", () => {
    expect(logSettings({}, false)).toEqual({ format: "json", level: "info", problems: [] });
    expect(logSettings({}, true).format).toBe("pretty");
    expect(logSettings({ LLMGW_LOG_FORMAT: "pretty" }, false).format).toBe("pretty");
    expect(logSettings({ LLMGW_LOG_FORMAT: "JSON" }, true).format).toBe("json");
  });

  it("takes LLMGW_LOG_LEVEL, and names a bad value instead of failing", () => {
    expect(logSettings({ LLMGW_LOG_LEVEL: "debug" }, false).level).toBe("debug");
    const bad = logSettings({ LLMGW_LOG_LEVEL: "loud", LLMGW_LOG_FORMAT: "xml" }, false);
    expect(bad.level).toBe("info");
    expect(bad.format).toBe("json");
    expect(bad.problems).toEqual([
      'LLMGW_LOG_FORMAT must be json or pretty, not "xml"',
      'LLMGW_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, not "loud"',
    ]);
  });
});
