// Drives the official @huggingface/hub client against a hubtest server.
// Usage: node driver.mjs '<json command>'; prints one JSON result on stdout.
// Commands (all take hubUrl, token, repo):
//   {"mode":"conformance","files":[{"path":"in/repo","local":"/abs/file"}]}
//       create the repo (twice: the second must be a 409), upload the files in one commit,
//       list them, check existence, read model info and the listing, download each back.
//   {"mode":"download","paths":["a","b"]}   download files and report sha256 and size.
//   {"mode":"upload","create":true,"files":[...]}  (create and) upload only: the benchmark.
//   {"mode":"fetch"}   list every file (recursively), then download each: what the app does.
//   {"mode":"download-to","files":[{"path":"in/repo","local":"/abs/dst"}]}  download each file
//       to its local path, streamed: the benchmark.
//   {"mode":"download-verify","files":[{"path":"in/repo","local":"/abs/dst","sha256":"…"}]}
//       download-to, hashing the bytes on their way to the file and failing unless the
//       sha256 matches, as our client's Download does: the benchmark.
//   {"mode":"json","path":"catalog.json"}   download one JSON file and print it as parsed.
// The benchmark modes print "vmhwm_kib=N" after the result: this process's own peak
// resident set (VmHWM of /proc/self/status), which the benchmark reads instead of
// getrusage's, since a child's ru_maxrss starts at its parent's high-water mark.
import { createHash } from "node:crypto";
import { createWriteStream, readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pathToFileURL } from "node:url";
import {
  createRepo, uploadFiles, listFiles, downloadFile, fileExists, modelInfo, listModels,
} from "@huggingface/hub";

const cmd = JSON.parse(process.argv[2]);
const auth = { accessToken: cmd.token, hubUrl: cmd.hubUrl };
const repo = { type: "model", name: cmd.repo };

async function sha256Of(blob) {
  const h = createHash("sha256");
  const reader = blob.stream().getReader();
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    h.update(value);
  }
  return { sha256: h.digest("hex"), size };
}

async function upload(files) {
  const t0 = process.hrtime.bigint();
  const out = await uploadFiles({
    ...auth, repo,
    files: files.map((f) => ({ path: f.path, content: pathToFileURL(f.local) })),
    commitTitle: "upload from @huggingface/hub",
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { commit: out.commit.oid, seconds };
}

async function download(paths) {
  const files = [];
  for (const path of paths) {
    const blob = await downloadFile({ ...auth, repo, path });
    if (!blob) throw new Error(`downloadFile(${path}) returned null`);
    files.push({ path, ...(await sha256Of(blob)) });
  }
  return files;
}

async function downloadTo(files) {
  const t0 = process.hrtime.bigint();
  for (const f of files) {
    const blob = await downloadFile({ ...auth, repo, path: f.path });
    if (!blob) throw new Error(`downloadFile(${f.path}) returned null`);
    await pipeline(Readable.fromWeb(blob.stream()), createWriteStream(f.local));
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

async function downloadVerify(files) {
  const t0 = process.hrtime.bigint();
  for (const f of files) {
    const blob = await downloadFile({ ...auth, repo, path: f.path });
    if (!blob) throw new Error(`downloadFile(${f.path}) returned null`);
    const h = createHash("sha256");
    await pipeline(
      Readable.fromWeb(blob.stream()),
      async function* (chunks) {
        for await (const chunk of chunks) {
          h.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(f.local),
    );
    const got = h.digest("hex");
    if (got !== f.sha256) throw new Error(`${f.path}: sha256 ${got}, want ${f.sha256}`);
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

function vmhwmKiB() {
  const m = readFileSync("/proc/self/status", "utf8").match(/^VmHWM:\s+(\d+) kB$/m);
  if (!m) throw new Error("/proc/self/status has no VmHWM line");
  return m[1];
}

async function conformance() {
  const result = {};
  await createRepo({ ...auth, repo });
  try {
    await createRepo({ ...auth, repo });
    result.secondCreate = 200;
  } catch (e) {
    result.secondCreate = e.statusCode;
  }
  result.upload = await upload(cmd.files);
  result.list = [];
  for await (const f of listFiles({ ...auth, repo, recursive: true })) {
    result.list.push({ path: f.path, type: f.type, size: f.size, lfs: f.lfs ? f.lfs.oid : null });
  }
  result.exists = await fileExists({ ...auth, repo, path: cmd.files[0].path });
  result.missingExists = await fileExists({ ...auth, repo, path: "no/such/file" });
  const info = await modelInfo({ ...auth, name: cmd.repo, additionalFields: ["sha", "siblings"] });
  result.info = { name: info.name, sha: info.sha, siblings: (info.siblings || []).map((s) => s.rfilename) };
  result.listed = [];
  for await (const m of listModels({ ...auth, search: { owner: cmd.repo.split("/")[0] } })) {
    result.listed.push(m.name);
  }
  result.downloads = await download(cmd.files.map((f) => f.path));
  return result;
}

const modes = {
  conformance,
  download: () => download(cmd.paths),
  fetch: async () => {
    const paths = [];
    for await (const f of listFiles({ ...auth, repo, recursive: true })) {
      if (f.type === "file") paths.push(f.path);
    }
    return download(paths);
  },
  upload: async () => {
    if (cmd.create) await createRepo({ ...auth, repo });
    return upload(cmd.files);
  },
  "download-to": () => downloadTo(cmd.files),
  "download-verify": () => downloadVerify(cmd.files),
  // download one JSON file and parse it, as an app reading the catalog does
  json: async () => {
    const blob = await downloadFile({ ...auth, repo, path: cmd.path });
    if (!blob) throw new Error(`downloadFile(${cmd.path}) returned null`);
    return JSON.parse(await blob.text());
  },
};
const benchmark = ["upload", "download-to", "download-verify"].includes(cmd.mode);

try {
  const out = await modes[cmd.mode]();
  process.stdout.write(JSON.stringify(out) + "\n");
  if (benchmark) process.stdout.write(`vmhwm_kib=${vmhwmKiB()}\n`);
} catch (e) {
  process.stderr.write(`driver: ${e.stack || e}\n`);
  process.exit(1);
}
