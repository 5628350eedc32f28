// Compiled and run by openapi-client.test.ts against types generated from the live /openapi.json
// (./api.d.ts, written by openapi-typescript at test time): proof that generated clients can use the API.
import createClient from "openapi-fetch";
import type { paths } from "./generated/api.js";

const [baseUrl, joinToken, adminToken, body] = process.argv.slice(2) as [string, string, string, string];

const agent = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${joinToken}` } });
const reg = await agent.POST("/api/v1/agents/register", { body: JSON.parse(body) });
if (!reg.data) throw new Error(`register failed: ${JSON.stringify(reg.error)}`);
const nodeToken: string = reg.data.nodeToken;

const hb = await agent.POST("/api/v1/agents/{node}/heartbeat", {
  params: { path: { node: reg.data.nodeId } },
  headers: { authorization: `Bearer ${nodeToken}` },
  body: { imex: { state: "ready", channels: 1 } },
});
if (!hb.data) throw new Error(`heartbeat failed: ${JSON.stringify(hb.error)}`);

const admin = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${adminToken}` } });
const node = await admin.GET("/api/v1/nodes/{id}", { params: { path: { id: reg.data.nodeId } } });
const missing = await admin.GET("/api/v1/nodes/{id}", { params: { path: { id: "no-such-node" } } });
const code: string | undefined = missing.error?.code;

// The generated types know the body: an IMEX state outside the schema's enum must not compile.
void (() =>
  agent.POST("/api/v1/agents/{node}/heartbeat", {
    params: { path: { node: "x" } },
    // @ts-expect-error -- "sleepy" is not an ImexState
    body: { imex: { state: "sleepy", channels: 1 } },
  }));

console.log(
  JSON.stringify({
    nodeId: reg.data.nodeId,
    imex: node.data?.inventory.imex.state,
    gpus: node.data?.inventory.gpus.length,
    missing: code,
  }),
);
