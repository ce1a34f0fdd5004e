-- wrk script for load.sh: every request is POST /orders with the same small JSON body.
wrk.method = "POST"
wrk.path = "/orders"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"customer":"wrk","sku":"apple","quantity":1}'

-- One machine-readable line: requests/s, p50 and p99 latency in microseconds, non-2xx answers, socket errors.
done = function(summary, latency, requests)
    local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format("RESULT %.1f %d %d %d %d\n", summary.requests / (summary.duration / 1e6),
        latency:percentile(50), latency:percentile(99), summary.errors.status, errors))
end
