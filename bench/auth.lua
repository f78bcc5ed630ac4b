-- wrk script for bench/cost.sh: one auth operation per run, against the emulator's root paths.
--   wrk ... -s cost.lua URL -- MODE RECORDS THREADS [SERVICE_KEY]
-- RECORDS: lines "email access refresh". Sessions are split over wrk's threads; for refresh each
-- thread keeps a queue of refresh tokens and puts back the token each response rotates to, so
-- every chain has exactly one request in flight and no token is ever presented twice.
local counter = 0
function setup(thread)
    thread:set("tid", counter)
    counter = counter + 1
end

function init(args)
    mode, nthreads, service, run = args[1], tonumber(args[3]), args[4], args[5]
    limit = tonumber(args[6] or "")
    queue, first, last, reqs, emails, seen = {}, 1, 0, {}, {}, 0
    local i = 0
    for line in io.lines(args[2]) do
        if i % nthreads == tid then
            local email, access, refresh = line:match("^(%S+) (%S+) (%S+)$")
            emails[#emails + 1] = email
            reqs[#reqs + 1] = wrk.format("GET", "/user", { ["Authorization"] = "Bearer " .. access })
            last = last + 1
            queue[last] = refresh
        end
        i = i + 1
    end
    serial = 0
end

local json = { ["Content-Type"] = "application/json" }

function request()
    if mode == "health" then
        return wrk.format("GET", "/health")
    elseif mode == "user" then
        seen = seen % #reqs + 1
        return reqs[seen]
    elseif mode == "signin" then
        seen = seen % #emails + 1
        return wrk.format("POST", "/token?grant_type=password", json,
            '{"email":"' .. emails[seen] .. '","password":"cost-Passw0rd!"}')
    elseif mode == "signup" then
        serial = serial + 1
        return wrk.format("POST", "/signup", json,
            '{"email":"new-' .. run .. '-' .. tid .. '-' .. serial .. '@example.com","password":"cost-Passw0rd!"}')
    elseif mode == "admin_list" then
        return wrk.format("GET", "/admin/users?page=1&per_page=50", { ["Authorization"] = "Bearer " .. service })
    end
    local token = "emptyqueue00"
    if first <= last then token = queue[first]; queue[first] = nil; first = first + 1 end
    return wrk.format("POST", "/token?grant_type=refresh_token", json, '{"refresh_token":"' .. token .. '"}')
end

function response(status, headers, body)
    if mode == "refresh" and status == 200 then
        local token = body:match('"refresh_token":"([^"]+)"')
        if token then last = last + 1; queue[last] = token end
    end
    if limit then
        limit = limit - 1
        if limit <= 0 then wrk.thread:stop() end
    end
end
