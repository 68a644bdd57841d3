package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestToolchainsRunConfined runs each installed toolchain's test runner in
// the sandbox, network off, with what their runtimes do behind the scenes
// (Node's child processes and their IPC channel, Python's multiprocessing
// and asyncio, cargo's jobserver, the JVM's selector and child processes):
// the UNIX socket filter must leave them working. Slow (cold caches), so
// only with LEMMINGS_TOOLCHAINS=1; docs/security.md has the timings.
func TestToolchainsRunConfined(t *testing.T) {
	if os.Getenv("LEMMINGS_TOOLCHAINS") != "1" {
		t.Skip("LEMMINGS_TOOLCHAINS=1 runs go test, pytest, node --test, cargo test and java in the sandbox")
	}
	b := newBox(t, true)
	write := func(dir string, files map[string]string) {
		for name, body := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		tool, cmd string
		files     map[string]string
	}{
		{"go", "go test ./...", map[string]string{
			"go.mod": "module example.com/m\n\ngo 1.22\n",
			"m_test.go": `package m
import ("net"; "os/exec"; "testing")
func TestIt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0"); if err != nil { t.Fatal(err) }
	ln.Close()
	if out, err := exec.Command("sh", "-c", "echo child").Output(); err != nil || string(out) != "child\n" { t.Fatal(err) }
}`}},
		{"pytest", "pytest -q -p no:cacheprovider", map[string]string{
			"test_it.py": `import asyncio, multiprocessing, subprocess
def sq(x): return x * x
def test_pool():
    with multiprocessing.Pool(2) as p: assert p.map(sq, [1, 2, 3]) == [1, 4, 9]
def test_asyncio():
    async def main():
        p = await asyncio.create_subprocess_exec("echo", "hi", stdout=asyncio.subprocess.PIPE)
        return (await p.communicate())[0]
    assert asyncio.run(main()) == b"hi\n"
def test_subprocess():
    assert subprocess.run(["echo", "x"], capture_output=True).stdout == b"x\n"
`}},
		{"node", "node --test", map[string]string{
			"package.json": `{"name": "m", "version": "1.0.0", "scripts": {"test": "node --test"}}`,
			"child.js":     "process.on('message', m => { process.send(m * 2); process.exit(0) })\n",
			"it.test.js": `const test = require('node:test'); const assert = require('node:assert');
const { fork, execFileSync } = require('node:child_process'); const fs = require('node:fs/promises');
test('fork with IPC', async () => {
  const c = fork(__dirname + '/child.js'); c.send(21);
  assert.strictEqual(await new Promise(r => c.on('message', r)), 42);
});
test('exec and fs', async () => {
  assert.strictEqual(execFileSync('echo', ['x']).toString(), 'x\n');
  await fs.writeFile('out.txt', 'x'); assert.strictEqual(await fs.readFile('out.txt', 'utf8'), 'x');
});`}},
		{"npm", "npm test --silent", map[string]string{
			"package.json": `{"name": "m", "version": "1.0.0", "scripts": {"test": "node -e \"require('child_process').execSync('echo ok')\""}}`}},
		{"cargo", "cargo test --offline -q", map[string]string{
			"Cargo.toml": "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/lib.rs": "#[test]\nfn it() { let o = std::process::Command::new(\"echo\").arg(\"x\").output().unwrap(); assert_eq!(o.stdout, b\"x\\n\"); let h = std::thread::spawn(|| 2); assert_eq!(h.join().unwrap(), 2); }\n"}},
		{"java", "javac T.java && java T", map[string]string{
			"T.java": `import java.nio.channels.*;
public class T { public static void main(String[] a) throws Exception {
  Selector s = Selector.open(); s.selectNow(); s.close();
  Process p = new ProcessBuilder("echo", "x").start(); if (p.waitFor() != 0) System.exit(1);
  System.out.println("java-ok"); } }`}},
		{"mvn", "mvn -v -q", nil},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			bin := strings.Fields(c.cmd)[0]
			if _, err := exec.LookPath(bin); err != nil {
				t.Skipf("%s is not installed", bin)
			}
			dir := t.TempDir()
			write(dir, c.files)
			start := time.Now()
			r := sh(t, b, Spec{Dir: dir}, c.cmd+" 2>&1")
			t.Logf("%s: exit %d in %s", c.cmd, r.code, time.Since(start).Round(time.Millisecond))
			if r.code != 0 {
				t.Errorf("%s failed in the sandbox (exit %d):\n%s", c.cmd, r.code, r.out)
			}
		})
	}
}
