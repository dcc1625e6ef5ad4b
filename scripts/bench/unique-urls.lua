-- wrk script for `make bench`: every request is a distinct, valid URL of a keyed read route, so the
-- API's per-URL caches see 100k+ different keys (the X-API-Key header comes from wrk -H).
--   wrk -s unique-urls.lua <url> -- <start> <stop-after> <stablecoin-id>...
-- Request i (counting from <start>; the bench starts each further run past the URLs already used)
-- goes by slot i % 8, with n = i / 8:
--   0:    /api/depeg-events?limit=1..100&offset=n/100      (DuckDB query)
--   1:    /api/events?limit=1..100&since=1+n/100           (DuckDB query)
--   2:    /api/non-usd-share?days=30..5000 while unused days remain, then as 3-7
--   3-7:  /api/supply-history?stablecoin=<id>&days=…      (every id at days=1, then days=2, …)
-- The DuckDB routes cost ~5 ms a request on this machine against ~0.15 ms for the others, hence
-- 2 slots in 8: 100k requests then take 3-5 minutes on this 2-core machine.
-- The thread stops itself once <stop-after> responses arrived (wrk still waits out its -d).

local counter, stop_after, received, ids = 0, math.huge, 0, {}

function init(args)
  counter = tonumber(args[1]) or 0
  stop_after = tonumber(args[2]) or math.huge
  for k = 3, #args do ids[#ids + 1] = args[k] end
  if #ids == 0 then ids[1] = "usdt-tether" end
end

function request()
  local i = counter
  counter = counter + 1
  local slot, n = i % 8, math.floor(i / 8)
  local path
  if slot == 0 then
    path = string.format("/api/depeg-events?limit=%d&offset=%d", 1 + n % 100, math.floor(n / 100) % 50001)
  elseif slot == 1 then
    path = string.format("/api/events?limit=%d&since=%d", 1 + n % 100, 1 + math.floor(n / 100))
  elseif slot == 2 and n <= 5000 - 30 then
    path = string.format("/api/non-usd-share?days=%d", 30 + n)
  else
    local m = n * 6 + slot - 2
    path = string.format("/api/supply-history?stablecoin=%s&days=%d", ids[1 + m % #ids], 1 + math.floor(m / #ids) % 3650)
  end
  return wrk.format("GET", path)
end

function response(status, headers, body)
  received = received + 1
  if received >= stop_after then wrk.thread:stop() end
end
