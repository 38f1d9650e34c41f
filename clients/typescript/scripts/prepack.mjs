// npm pack's `prepack`, run before `prepare` (tsc -b tsconfig.build.json) builds what changed in src/ since its
// build info (dist/tsconfig.build.tsbuildinfo). The tarball ships all of dist/src ("files"), so dist/src must hold
// the build of src/ and nothing else. An output whose source is gone (a module deleted or renamed since the last
// build) is removed here. A source whose output is missing makes this remove dist/ as a fresh checkout lacks it:
// tsc -b trusts its build info and would not write that file again, so `prepare` builds all of it anew.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const built = join(root, "dist", "src");

/** The files under `dir`, as paths relative to it. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path).map((f) => join(entry.name, f)) : [relative(dir, path)];
  });
}

if (existsSync(built)) {
  const stems = new Set(
    files(join(root, "src"))
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
      .map((f) => f.slice(0, -".ts".length)),
  );
  const outputs = new Set(files(built));
  for (const output of outputs) {
    const stem = output.replace(/(\.d\.ts|\.js)$/, "");
    if (stem === output || !stems.has(stem)) {
      rmSync(join(built, output));
    }
  }
  if ([...stems].some((stem) => !outputs.has(`${stem}.js`) || !outputs.has(`${stem}.d.ts`))) {
    rmSync(join(root, "dist"), { recursive: true, force: true });
  }
}
