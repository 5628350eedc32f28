// The one zod import of the project: zod 4 extended with `.openapi()` metadata.
export { z } from "@hono/zod-openapi";
