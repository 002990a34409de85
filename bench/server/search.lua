-- wrk script: POSTs search request bodies (one JSON per line of the file
-- given after `--`) to the URL's path, cycling through them; each thread
-- starts at a different line. Prints a JSON summary line at the end.
-- usage: wrk -t1 -c4 -d20s -s search.lua http://127.0.0.1:PORT/collections/X/points/search -- bodies.jsonl
local bodies = {}
local i = 0
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

function init(args)
  for line in io.lines(args[1] or "bodies.jsonl") do bodies[#bodies + 1] = line end
  i = (id or 0) * 7919 % #bodies
end

function request()
  i = i % #bodies + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, bodies[i])
end

function done(summary, latency, requests)
  io.write(string.format(
    '{"requests": %d, "duration_s": %.3f, "qps": %.1f, "non_2xx": %d, "socket_errors": %d, ' ..
    '"p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, "mean_ms": %.3f, "max_ms": %.3f}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3,
    latency.mean / 1e3, latency.max / 1e3))
end
