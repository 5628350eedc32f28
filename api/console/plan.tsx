/** @jsxImportSource hono/jsx */
// /admin/plan: devices by class and, per model profile and pool, how many more replicas fit now and where.
import type { Context } from "hono";
import type { ClassCapacity } from "../placement/capacity.js";
import { readCapacity } from "../views/capacity.js";
import { Badge, CountedReasons, page } from "./layout.js";
import type { ConsoleEnv } from "./session.js";

/** Devices by class: total, free, used and unavailable with why. */
export function ClassTable(p: { classes: ClassCapacity[] }) {
  if (!p.classes.length) return <p class="muted">No devices: no node has registered a GPU yet.</p>;
  return (
    <table>
      <caption>Devices by class</caption>
      <thead>
        <tr>
          <th scope="col">class</th>
          <th scope="col" class="num">
            total
          </th>
          <th scope="col" class="num">
            free
          </th>
          <th scope="col" class="num">
            used
          </th>
          <th scope="col" class="num">
            unavailable
          </th>
          <th scope="col">why unavailable</th>
        </tr>
      </thead>
      <tbody>
        {p.classes.map((k) => {
          const off = k.unavailable.reduce((n, u) => n + u.count, 0);
          return (
            <tr>
              <th scope="row" class="mono">
                {k.class}
              </th>
              <td class="num">{k.total}</td>
              <td class="num">{k.free}</td>
              <td class="num">{k.used}</td>
              <td class="num">{off}</td>
              <td>
                <CountedReasons items={k.unavailable} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** GET /admin/plan. */
export async function planPage(c: Context<ConsoleEnv>) {
  const now = c.var.deps.now();
  const { classes, profiles } = await readCapacity(c.var.deps, now);
  return page(
    c,
    { title: "Plan", section: "/admin/plan", csrf: c.var.session.csrf, now },
    <>
      <h1>Plan</h1>
      <p class="muted">
        What the fleet holds, and how many more replicas of each model profile would fit now (the same figures as GET
        /api/v1/plan).
      </p>
      <ClassTable classes={classes} />
      <h2>What more fits</h2>
      {profiles.length ? (
        <table>
          <caption>Per model profile and pool</caption>
          <thead>
            <tr>
              <th scope="col">model</th>
              <th scope="col">profile</th>
              <th scope="col">class</th>
              <th scope="col">pool</th>
              <th scope="col" class="num">
                more replicas
              </th>
              <th scope="col">where, or why none</th>
            </tr>
          </thead>
          <tbody>
            {profiles.map((p) => (
              <tr>
                <th scope="row">{p.model}</th>
                <td>{p.profile}</td>
                <td class="mono">{p.gpuClass}</td>
                <td>{p.pool}</td>
                <td class="num">
                  <Badge
                    state={p.fits ? "ready" : "none"}
                    label={String(p.fits)}
                    title={p.fits ? `${p.fits} more fit` : "none fits"}
                  />
                </td>
                <td>
                  {p.reason ??
                    Object.entries(p.nodes)
                      .map(([n, k]) => `${n} (${k} shard${k === 1 ? "" : "s"})`)
                      .join(", ")}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">
          No model profiles to fit, or no pools: add models with <code>{"PUT /api/v1/models/{name}"}</code> and register
          nodes.
        </p>
      )}
    </>,
  );
}
