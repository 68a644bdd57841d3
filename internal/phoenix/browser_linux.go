package phoenix

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ChromiumPath is Debian's chromium (.ci/run installs it).
const ChromiumPath = "/usr/bin/chromium"

// How long the page's scripts get to load and draw the trace.
const renderBudget = 20 * time.Second

// chromium runs headless Chromium on one page. Every host name but the
// loopback address resolves to nothing: Phoenix's UI asks the internet for
// fonts and GitHub stars, and a test reaches nothing beyond this machine.
func chromium(ctx context.Context, url string, args ...string) ([]byte, error) {
	bin := ChromiumPath
	if p := os.Getenv("LEMMINGS_CHROMIUM"); p != "" {
		bin = p
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no chromium at %s: apt-get install -y chromium (.ci/run does it)", bin)
	}
	profile, err := os.MkdirTemp("", "lemmings-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(ctx, renderBudget+90*time.Second)
	defer cancel()
	full := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + profile, `--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1`,
		"--window-size=1600,1000", fmt.Sprintf("--virtual-time-budget=%d", renderBudget.Milliseconds())}, args...)
	cmd := exec.CommandContext(ctx, bin, append(full, url)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("chromium %s: %v\n%s", url, err, tail(stderr.String(), 10))
	}
	return out, nil
}

// RenderedText is the page's DOM once its scripts have drawn it.
func RenderedText(ctx context.Context, url string) (string, error) {
	out, err := chromium(ctx, url, "--dump-dom")
	return string(out), err
}

// Screenshot saves the page, as drawn, to a PNG file.
func Screenshot(ctx context.Context, url, png string) error {
	_, err := chromium(ctx, url, "--screenshot="+png)
	if err != nil {
		return err
	}
	if info, err := os.Stat(png); err != nil || info.Size() == 0 {
		return fmt.Errorf("chromium wrote no screenshot to %s", png)
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
