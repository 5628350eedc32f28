// bench/router.ts's command line and its nginx configuration.
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";

/** The command line, checked before anything starts (throws with a message for a bad flag). */
export function routerOptions() {
  const { values: v } = parseArgs({
    options: {
      rates: { type: "string" },
      runs: { type: "string" },
      "throughput-runs": { type: "string" },
      seconds: { type: "string" },
      pin: { type: "boolean" },
      "latency-only": { type: "boolean" },
      "latency-requests": { type: "string" },
      "latency-streams": { type: "string" },
    },
  });
  const whole = (flag: string, x: string | undefined, dflt: number, min = 0) => {
    const n = x === undefined ? dflt : Number(x);
    if (x?.trim() === "" || !Number.isInteger(n) || n < min)
      throw new Error(`--${flag} wants a whole number from ${min} up, not ${JSON.stringify(x)}`);
    return n;
  };
  const rates = (v.rates ?? "200,500,1000").split(",").map((r) => whole("rates", r, 0, 1));
  const runs = v.runs === undefined ? undefined : whole("runs", v.runs, 0, 1);
  if (v.pin && availableParallelism() < 2) throw new Error("--pin needs at least two CPUs");
  return {
    rates,
    runs,
    seconds: whole("seconds", v.seconds, 5, 1),
    throughputRuns: whole("throughput-runs", v["throughput-runs"], 3),
    pin: !!v.pin,
    latencyOnly: !!v["latency-only"],
    latencyRequests: whole("latency-requests", v["latency-requests"], 2000, 1),
    latencyStreams: whole("latency-streams", v["latency-streams"], 40, 1),
  };
}

/**
 * nginx in the foreground, one worker, no buffering (SSE passes through): one server per upstream (a port in front of
 * each set of engines), upstream keep-alive.
 */
export function nginxConf(dir: string, servers: { port: number; engines: string[] }[]): string {
  const block = ({ port, engines }: { port: number; engines: string[] }, i: number) => `  upstream engines${i} {
${engines.map((u) => `    server ${u.replace("http://", "")};`).join("\n")}
    keepalive 256;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://engines${i};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }`;
  return `worker_processes 1;
master_process off;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${servers.map(block).join("\n")}
}
`;
}
