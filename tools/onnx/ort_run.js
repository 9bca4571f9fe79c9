// Runs an ONNX model with onnxruntime-node (CPU) on a float32 .npy input: REPS timed runs after
// one warm-up, intra-op threads THREADS; writes the first output's float32 bytes to OUT and prints
// {"ms": median milliseconds per run, "cpu_ms": mean process CPU milliseconds per run, spinning
// included}.
// usage: node ort_run.js MODEL X.npy THREADS REPS OUT
const fs = require("fs");
const ort = require("onnxruntime-node");

function readNpy(path) {
  const b = fs.readFileSync(path);
  const hlen = b.readUInt16LE(8);
  const header = b.toString("latin1", 10, 10 + hlen);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True")) throw new Error(path + ": needs C-order <f4");
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(",").filter((s) => s.trim()).map(Number);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hlen, b.byteOffset + b.length));
  return new ort.Tensor("float32", data, shape);
}

(async () => {
  const [model, xPath, threads, reps, out] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: "sequential",
  });
  const feeds = { [session.inputNames[0]]: readNpy(xPath) };
  let result = await session.run(feeds);
  // CPU time as bench/onnx/onnx_bench.cpp measures Maroon's: the whole loop's, read once the
  // intra-op workers have stopped spinning (a pause before and after), over REPS. (The process
  // clock counts a spinning thread's time late, so per-run differences missed a worker's.)
  const settle = () => new Promise((r) => setTimeout(r, 50));
  const times = [];
  await settle();
  const c0 = process.cpuUsage();
  for (let i = 0; i < Number(reps); i++) {
    const t0 = process.hrtime.bigint();
    result = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  await settle();
  const c = process.cpuUsage(c0);
  const cpuMs = (c.user + c.system) / 1e3 / Number(reps);
  times.sort((a, b) => a - b);
  const y = result[session.outputNames[0]].data;
  fs.writeFileSync(out, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  const mid = Math.floor(times.length / 2);
  console.log(JSON.stringify({ ms: times[mid], cpu_ms: cpuMs }));
})().catch((e) => { console.error(e.message); process.exit(1); });
