#!/usr/bin/env node
// Launcher for the `llmgw` bin: registers tsx so the TypeScript CLI runs as is, wherever it is called from.
import { register } from "tsx/esm/api";

register();
await import("./llmgw.ts");
