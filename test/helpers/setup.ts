// Runs in every test file: no process a test started outlives its file, whether the test passed or not.
import { afterAll } from "vitest";
import { killAll } from "./process.js";

afterAll(killAll);
