// What the docs' JavaScript examples import as '@supabase/supabase-js' when the suite runs them.
//
// The package itself cannot be installed where the suite runs (no npm registry), so this module
// stands in for the few client calls the examples make. Each sends the request supabase-js sends
// for that call (same route under /auth/v1, same apikey and bearer headers, same JSON body
// fields) and answers in the client's `{ data, error }` shape, so an example runs its own code
// (fetches, parsing, the order of its calls) against the emulator as written. It proves nothing
// about supabase-js itself: the real-client tests (Tests/python/test_client_*.py) do that with
// supabase-py, whose requests are the same. A call it does not know fails loudly instead of
// pretending.

class AuthError extends Error {
  constructor(body, status) {
    super(body.msg ?? body.message ?? body.error_description ?? JSON.stringify(body))
    this.status = status
    this.code = body.error_code ?? body.error
  }
}

function auth(url, key) {
  const headers = {
    apikey: key,
    Authorization: `Bearer ${key}`,
    'Content-Type': 'application/json;charset=UTF-8',
    'X-Supabase-Api-Version': '2024-01-01',
  }
  async function post(path, body) {
    const res = await fetch(`${url}/auth/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
    const text = await res.text()
    const json = text ? JSON.parse(text) : {}
    return res.ok ? { json, error: null } : { json: null, error: new AuthError(json, res.status) }
  }
  const calls = {
    async signInWithOtp({ email, phone, options = {} }) {
      const { error } = await post('/otp', {
        email, phone, data: options.data ?? {}, create_user: options.shouldCreateUser ?? true,
        gotrue_meta_security: {}, code_challenge: null, code_challenge_method: null,
      })
      return { data: { user: null, session: null }, error }
    },
    async verifyOtp(params) {
      const { json, error } = await post('/verify', { ...params, gotrue_meta_security: {} })
      if (error) return { data: { user: null, session: null }, error }
      const session = json.access_token ? json : null
      return { data: { user: session ? json.user : json, session }, error: null }
    },
  }
  return new Proxy(calls, {
    get(target, name) {
      if (name in target) return target[name]
      throw new Error(`auth.${String(name)} is not in the suite's supabase-js stand-in (Tests/python/doc_snippets/supabase-js.mjs)`)
    },
  })
}

export function createClient(url, key) {
  if (!/^https?:\/\//.test(url) || !key) throw new Error('createClient needs a URL and a key')
  return { auth: auth(url.replace(/\/+$/, ''), key) }
}
