// The host's `fetch` (host/src/engines/js/fetch.js), which yohost's own
// plugins and pi extensions share, over a stand-in for the host's `fetch`
// service: what it sends (method, headers, a body as base64, from a
// `Request` too), how it reads the reply (UTF-8, JSON, once), and that
// without the service it rejects naming `capabilities.network`.

import assert from "node:assert/strict";
import { test } from "node:test";
import { fetch, Headers, Request, Response } from "yohost:fetch";

const KEY = Symbol.for("yohost.host");

/** Run `body` with a host whose `fetch` records each request and answers `reply`. */
async function withHost(reply, body) {
  const sent = [];
  globalThis[KEY] = {
    fetch: async (request) => {
      sent.push(JSON.parse(request));
      return reply;
    },
  };
  try {
    await body(sent);
  } finally {
    delete globalThis[KEY];
  }
}

const REPLY = {
  status: 201,
  statusText: "Created",
  url: "http://127.0.0.1:9/x",
  redirected: false,
  headers: [["X-Test", "yes"]],
  body: Buffer.from('{"text":"héllo ✓"}').toString("base64"),
};

test("a request is sent as the host's service takes it, and the reply read once", async () => {
  await withHost(REPLY, async (sent) => {
    const res = await fetch("http://127.0.0.1:9/x", { method: "post", headers: { "Content-Type": "text/plain" }, body: "héllo" });
    assert.ok(res instanceof Response);
    assert.equal(res.status, 201);
    assert.equal(res.ok, true);
    assert.equal(res.headers.get("x-test"), "yes");
    assert.deepEqual(await res.json(), { text: "héllo ✓" });
    await assert.rejects(res.text(), /already been read/);
    assert.deepEqual(sent, [
      { url: "http://127.0.0.1:9/x", method: "POST", headers: [["content-type", "text/plain"]], body: Buffer.from("héllo").toString("base64") },
    ]);
  });
});

test("a Request carries its method, headers and body, and a clone too", async () => {
  await withHost(REPLY, async (sent) => {
    const request = new Request("http://127.0.0.1:9/x", { method: "PUT", headers: new Headers([["A", "1"]]), body: new Uint8Array([1, 2, 255]) });
    await fetch(request.clone());
    await fetch(request, { method: "GET", body: null });
    assert.deepEqual(sent[0], { url: "http://127.0.0.1:9/x", method: "PUT", headers: [["a", "1"]], body: "AQL/" });
    assert.deepEqual(sent[1], { url: "http://127.0.0.1:9/x", method: "GET", headers: [["a", "1"]], body: null });
  });
});

test("without the host's service, fetch rejects naming the grant and the host", async () => {
  await assert.rejects(fetch("https://api.example.com/v1"), (error) => {
    assert.ok(error instanceof TypeError);
    assert.match(error.message, /^fetch\("https:\/\/api\.example\.com\/v1"\) is not available: .*`capabilities\.network`/);
    assert.match(error.message, /network = \["api\.example\.com"\]/);
    return true;
  });
});
