// Drives express-rate-limit's real middleware (its MemoryStore and its header code) on a
// virtual clock: reads {limit, windowMs, requests: [{t_ms, key}]} as JSON on stdin, and
// writes one JSON line per request with its status and the headers the middleware set.
// Date.now is the only clock the library reads for its decisions and headers.
'use strict';
const { rateLimit } = require('express-rate-limit');

let now = 0;
Date.now = () => now;

function response() {
  const headers = {};
  return {
    headersSent: false,
    statusCode: 200,
    headers,
    setHeader(name, value) { headers[name.toLowerCase()] = String(value); },
    append(name, value) {
      const k = name.toLowerCase();
      headers[k] = headers[k] === undefined ? String(value) : headers[k] + ', ' + value;
    },
    getHeader(name) { return headers[name.toLowerCase()]; },
    on() {},
    status(code) { this.statusCode = code; return this; },
    send() {},
  };
}

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const spec = JSON.parse(input);
  const out = [];
  for (const draft of spec.drafts) {
    const limiter = rateLimit({
      windowMs: spec.windowMs,
      limit: spec.limit,
      standardHeaders: draft,
      legacyHeaders: true,
      identifier: 'policy',
      keyGenerator: (req) => req.key,
      validate: false,
      handler: (req, res, next, options) => { res.status(options.statusCode); req.done(); },
    });
    for (const r of spec.requests) {
      now = r.t_ms;
      const res = response();
      await new Promise((resolve) => {
        const req = { key: r.key, done: resolve, ip: '127.0.0.1', headers: {}, app: { get() {} } };
        limiter(req, res, () => resolve());
      });
      out.push(JSON.stringify({ draft, status: res.statusCode, headers: res.headers }));
    }
  }
  process.stdout.write(out.join('\n') + '\n');
  process.exit(0); // the MemoryStore's cleanup interval would keep the process alive
}

main().catch((err) => { console.error(err); process.exit(1); });
