// The same `node:fs` calls, run by real Node and by a pi extension in the
// host (tests/integration/pi_node_fs.rs), inside the folder `dir` the test sets up:
// what each returns, or the error it throws (`code`, `errno`, `syscall`,
// `path`, `message`, with `dir` shown as `D`).

async function probe(fs, fsp, readline, dir) {
  const out = {};
  const failure = (e) => {
    const o = { code: e.code, errno: e.errno, syscall: e.syscall, message: e.message };
    if ("path" in e) o.path = e.path.startsWith(dir) ? "D" + e.path.slice(dir.length) : e.path;
    o.message = o.message.split(dir).join("D");
    return o;
  };
  const sync = (name, f) => {
    try {
      out[name] = { ok: f() ?? null };
    } catch (e) {
      out[name] = { error: failure(e) };
    }
  };
  const later = async (name, f) => {
    try {
      out[name] = { ok: (await f()) ?? null };
    } catch (e) {
      out[name] = { error: failure(e) };
    }
  };
  const p = (rel) => `${dir}/${rel}`;
  const bytes = (b) => [Buffer.isBuffer(b), ...b];
  sync("exists", () => [fs.existsSync(p("a.txt")), fs.existsSync(p("missing")), fs.existsSync(p("sub")), fs.existsSync(undefined)]);
  sync("read missing", () => fs.readFileSync(p("missing")));
  sync("read a dir", () => fs.readFileSync(p("sub")));
  sync("read a buffer", () => bytes(fs.readFileSync(p("a.txt"))));
  sync("read binary", () => bytes(fs.readFileSync(p("bin"))));
  sync("read text", () => [fs.readFileSync(p("a.txt"), "utf8"), fs.readFileSync(p("a.txt"), { encoding: "base64" })]);
  sync("read malformed utf8", () => fs.readFileSync(p("bin"), "utf-8"));
  sync("mkdir existing", () => fs.mkdirSync(p("sub")));
  sync("mkdir without parent", () => fs.mkdirSync(p("no/deep")));
  sync("mkdir recursive", () => [fs.mkdirSync(p("no/deep"), { recursive: true }).split(dir).join("D"), fs.mkdirSync(p("no"), { recursive: true }) ?? "none", fs.statSync(p("no/deep")).isDirectory()]);
  sync("readdir a file", () => fs.readdirSync(p("a.txt")));
  sync("readdir missing", () => fs.readdirSync(p("missing")));
  sync("readdir names", () => fs.readdirSync(p("sub")).sort());
  sync("readdir with file types", () =>
    fs.readdirSync(dir, { withFileTypes: true })
      .map((d) => [d.name, d.isFile(), d.isDirectory(), d.isSymbolicLink()])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1)),
  );
  sync("rmdir not empty", () => fs.rmdirSync(p("sub")));
  sync("unlink missing", () => fs.unlinkSync(p("missing")));
  sync("unlink a dir", () => fs.unlinkSync(p("sub")));
  sync("stat missing", () => fs.statSync(p("missing")));
  sync("stat missing, no throw", () => fs.statSync(p("missing"), { throwIfNoEntry: false }) === undefined);
  sync("stat", () => { const s = fs.statSync(p("a.txt")); return [s.size, s.isFile(), s.isDirectory(), typeof s.mtimeMs]; });
  sync("write a dir", () => fs.writeFileSync(p("sub"), "x"));
  sync("write bytes", () => { fs.writeFileSync(p("w.bin"), Buffer.from([1, 2, 255])); fs.appendFileSync(p("w.bin"), new Uint8Array([7])); return bytes(fs.readFileSync(p("w.bin"))); });
  sync("write base64", () => { fs.writeFileSync(p("w.txt"), "aGk=", "base64"); return fs.readFileSync(p("w.txt"), "utf8"); });
  sync("mkdtemp", () => { const made = fs.mkdtempSync(p("tmp-")); return [/\/tmp-[A-Za-z0-9]{6}$/.test(made), fs.statSync(made).isDirectory()]; });
  sync("mkdtemp without parent", () => fs.mkdtempSync(p("missing/x-")));
  sync("access missing", () => fs.accessSync(p("missing")));
  sync("rename", () => { fs.writeFileSync(p("r1.txt"), "moved"); fs.renameSync(p("r1.txt"), p("sub/r2.txt")); return [fs.existsSync(p("r1.txt")), fs.readFileSync(p("sub/r2.txt"), "utf8")]; });
  sync("rename over a file", () => { fs.writeFileSync(p("r3.txt"), "new"); fs.renameSync(p("r3.txt"), p("sub/r2.txt")); return fs.readFileSync(p("sub/r2.txt"), "utf8"); });
  sync("rename missing", () => fs.renameSync(p("missing"), p("r4.txt")));
  await later("rename, promises", async () => { await fsp.rename(p("sub/r2.txt"), p("r5.txt")); return fs.readFileSync(p("r5.txt"), "utf8"); });
  sync("rm a dir", () => fs.rmSync(p("no")));
  sync("rm recursive", () => { fs.rmSync(p("no"), { recursive: true }); fs.rmSync(p("missing"), { force: true }); return fs.existsSync(p("no")); });
  sync("watch missing", () => fs.watch(p("missing")));
  sync("watch", () => { const w = fs.watch(p("a.txt"), () => {}); const kind = typeof w.close; w.close(); return kind; });
  await later("promises read missing", () => fsp.readFile(p("missing")));
  await later("promises read", async () => bytes(await fsp.readFile(p("a.txt"))));
  await later("promises readdir", async () => (await fsp.readdir(p("sub"), { withFileTypes: true })).map((d) => [d.name, d.isFile()]));
  await later("promises mkdtemp", async () => fs.statSync(await fsp.mkdtemp(p("ptmp-"))).isDirectory());
  await later("callback read", () => new Promise((resolve) => fs.readFile(p("a.txt"), "utf8", (e, text) => resolve([e, text]))));
  await later("callback read missing", () => new Promise((resolve, reject) => fs.readFile(p("missing"), (e) => (e ? reject(e) : resolve("no error")))));
  await later("callback readdir", () => new Promise((resolve) => fs.readdir(p("sub"), (e, names) => resolve([e, names.sort()]))));
  await later("stream", () => new Promise((resolve, reject) => {
    const parts = [];
    fs.createReadStream(p("a.txt"), "utf8").on("data", (c) => parts.push(c)).on("error", reject).on("end", () => resolve(parts.join("")));
  }));
  await later("stream chunks", async () => {
    const parts = [];
    for await (const c of fs.createReadStream(p("a.txt"), { highWaterMark: 4 })) parts.push(bytes(c));
    return parts;
  });
  await later("stream range", async () => {
    const parts = [];
    for await (const c of fs.createReadStream(p("a.txt"), { encoding: "utf8", start: 1, end: 3 })) parts.push(c);
    return parts;
  });
  await later("stream missing", () => new Promise((resolve, reject) => {
    fs.createReadStream(p("missing")).on("error", reject).on("data", () => resolve("data"));
  }));
  await later("readline", async () => {
    const lines = [];
    for await (const line of readline.createInterface({ input: fs.createReadStream(p("lines.txt")) })) lines.push(line);
    return lines;
  });
  await later("write stream", () => new Promise((resolve, reject) => {
    const w = fs.createWriteStream(p("ws.txt"));
    w.on("error", reject).on("finish", () => resolve(fs.readFileSync(p("ws.txt"), "utf8")));
    w.write("one ");
    w.end("two");
  }));
  return out;
}
