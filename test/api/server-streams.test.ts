// Which database URLs an instance reaches over WebSocket, where it keeps streams open, and how: as @libsql/client would.
import { expect, it } from "vitest";
import { wsTarget } from "../../api/db/server-streams.js";

it("the WebSocket URL is the client's: libsql: is wss: (ws: with ?tls=0), the token may come in the URL; HTTP has none", () => {
  expect(wsTarget("libsql://db.example.com")).toEqual({ url: "wss://db.example.com", authToken: undefined });
  expect(wsTarget("libsql://127.0.0.1:8080?tls=0&authToken=abc")).toEqual({
    url: "ws://127.0.0.1:8080",
    authToken: "abc",
  });
  expect(wsTarget("ws://127.0.0.1:8080", "t")).toEqual({ url: "ws://127.0.0.1:8080", authToken: "t" });
  expect(wsTarget("wss://h/db?x=1")).toEqual({ url: "wss://h/db?x=1", authToken: undefined });
  expect(wsTarget("http://127.0.0.1:8080")).toBeUndefined();
  expect(wsTarget("file:data/llmgw.db")).toBeUndefined();
  expect(wsTarget("not a URL")).toBeUndefined();
});
