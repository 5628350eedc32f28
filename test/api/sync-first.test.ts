// Request bodies are validated by a synchronous parse first (zod compiles object checks only for those): the answer is
// the one the asynchronous parse gives, for good and bad bodies alike, and a schema with an asynchronous check still
// gets it.
import { describe, expect, it } from "vitest";
import { syncFirst } from "../../api/openapi.js";
import { heartbeatOf } from "../../shared/heartbeat-of.js";
import { Heartbeat } from "../../shared/schemas/agent.js";
import { z } from "../../shared/z.js";
import { H100_XML, inventoryFromCapture } from "../helpers/inventory.js";

describe("syncFirst", () => {
  const body = JSON.parse(JSON.stringify(heartbeatOf(inventoryFromCapture(H100_XML))));
  const Strict = z.strictObject({ gpus: Heartbeat.shape.gpus, memoryAvailableMiB: z.number().int().optional() });
  const schema = syncFirst(Strict.clone());

  it("answers as the asynchronous parse does, good bodies and bad", async () => {
    const bad = [
      { ...body, mood: "ok" },
      { ...body, gpus: [{ ...body.gpus[0], utilizationPercent: 140 }] },
      { gpus: "all" },
      null,
    ];
    for (const input of [{ gpus: body.gpus }, ...bad]) {
      const [ours, theirs] = [await schema.safeParseAsync(input), await Strict.safeParseAsync(input)];
      expect(ours.success).toBe(theirs.success);
      expect(ours.data).toEqual(theirs.data);
      expect(ours.error?.issues).toEqual(theirs.error?.issues);
    }
    expect((await schema.safeParseAsync({ gpus: body.gpus })).success).toBe(true);
    expect((await schema.safeParseAsync(bad[0])).success).toBe(false);
  });

  it("still runs a schema's asynchronous checks", async () => {
    const known = syncFirst(
      z.strictObject({ name: z.string() }).refine(async (v) => v.name !== "taken", { message: "name taken" }),
    );
    expect((await known.safeParseAsync({ name: "free" })).success).toBe(true);
    const taken = await known.safeParseAsync({ name: "taken" });
    expect(taken.success).toBe(false);
    expect(taken.error?.issues[0]?.message).toBe("name taken");
  });
});
