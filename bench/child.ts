import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** Starts a process that prints one JSON line when ready; resolves with that object. */
export function startChild(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; ready: Record<string, unknown> }> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (!line.startsWith("{")) return;
      try {
        resolve({ child, ready: JSON.parse(line) as Record<string, unknown> });
      } catch {
        // a log line, not the ready line
      }
    });
    child.once("exit", (code) =>
      reject(new Error(`${args.join(" ")} exited with ${code} before it was ready`)),
    );
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export function runCli(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/pixelhouse.mjs", ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.once("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`pixelhouse ${args[0]} exited ${code}`)),
    );
  });
}
