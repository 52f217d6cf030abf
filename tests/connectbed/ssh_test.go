package bedtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hev2/hev2/tests/testbed"
)

// sshPort is where the test's sshd listens (a non-default port, in the
// server namespace only).
const sshPort = 2222

// sshFixture is a running sshd in the server namespace, on both healthy
// addresses, with a host key and an authorized key made for the test, and
// the ssh client options that trust exactly those. Nothing of the system's
// ssh configuration is read or changed: sshd gets its own config file, and
// its privilege-separation directory (/run/sshd) lives in a private mount
// namespace over a directory of the test.
type sshFixture struct {
	dir     string
	options []string // ssh -F ... -o ... without the ProxyCommand
}

func run(t *testing.T, argv ...string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func startSSHD(t *testing.T) *sshFixture {
	t.Helper()
	sshd := "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("no %s (Debian's openssh-server; make deps installs it): %v", sshd, err)
	}
	dir := t.TempDir()
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host_key"))
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "user_key"))
	userPub, err := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	hostPub, err := os.ReadFile(filepath.Join(dir, "host_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "authorized_keys"), string(userPub))
	write(t, filepath.Join(dir, "known_hosts"), "hev2-test-sshd "+string(hostPub))
	write(t, filepath.Join(dir, "sshd_config"), fmt.Sprintf(`ListenAddress %s:%d
ListenAddress [%s]:%d
HostKey %s
AuthorizedKeysFile %s
PidFile none
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
LogLevel ERROR
`, testbed.V4Good1, sshPort, testbed.V6Good1, sshPort,
		filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys")))
	// sshd wants /run/sshd (root's, not writable by others) for its
	// unprivileged child: `ip netns exec` gives the command its own mount
	// namespace, where a directory of the test is bound over /run.
	runDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// In the same mount namespace, root's passwd entry gets the test's
	// directory as home and /bin/sh as shell: the session runs no dotfile
	// of this machine's root (bash sources ~/.bashrc for every ssh
	// command; here that was a 4 s pyenv init).
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "passwd"), passwdWithRoot(t, home, "/bin/sh"))
	var logs bytes.Buffer
	cmd := exec.Command("ip", "netns", "exec", bed.ServerNS, "sh", "-ec",
		`mount --bind "$1" /run; mkdir -m 0755 /run/sshd; mount --bind "$3" /etc/passwd
		exec /usr/sbin/sshd -D -e -f "$2"`,
		"sh", runDir, filepath.Join(dir, "sshd_config"), filepath.Join(dir, "passwd"))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sshd said: %s", logs.String())
		}
	})
	// Ready when it accepts (from the client namespace, on the address the
	// race will win); sshd may start slowly on a loaded machine.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := bed.ProbeConnect(testbed.V4Good1, sshPort, 200*time.Millisecond); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd in the server namespace did not listen on port %d: %s", sshPort, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &sshFixture{dir: dir, options: []string{
		"-F", "/dev/null", // no ~/.ssh/config, no /etc/ssh/ssh_config
		"-p", fmt.Sprint(sshPort),
		"-i", filepath.Join(dir, "user_key"),
		"-o", "IdentitiesOnly=yes",
		"-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile=" + filepath.Join(dir, "known_hosts"),
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "HostKeyAlias=hev2-test-sshd",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "LogLevel=ERROR",
	}}
}

// passwdWithRoot is /etc/passwd with root's home and shell replaced.
func passwdWithRoot(t *testing.T, home, shell string) string {
	t.Helper()
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if f := strings.Split(l, ":"); len(f) == 7 && f[0] == "root" {
			f[5], f[6] = home, shell
			lines[i] = strings.Join(f, ":")
		}
	}
	return strings.Join(lines, "\n")
}

// proxyCommand is the README's line with this tree's tool.
func proxyCommand() string { return "ProxyCommand=" + tool + " --stdio %h %p" }

// TestSSHProxyCommand: ssh -o ProxyCommand='hev2-connect --stdio %h %p'
// reaches sshd through the race (the name's IPv6 address is blackholed;
// sshd sees the client's IPv4 address), runs a command and carries 1 MiB
// of stdin to it intact; then git clones a repository over the same kind
// of ssh.
func TestSSHProxyCommand(t *testing.T) {
	f := startSSHD(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	data := randomBytes(t, 1<<20)
	argv := append([]string{"ssh"}, f.options...)
	argv = append(argv, "-o", proxyCommand(), "root@"+raceName, `echo "$SSH_CONNECTION"; sha256sum`)
	cmd := bed.Command(ctx, argv...)
	cmd.Stdin = bytes.NewReader(data)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("ssh through hev2-connect --stdio: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
	}
	took := time.Since(start)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	wantConn := fmt.Sprintf("%s ", testbed.ClientV4)
	wantSum := sum(data) + "  -"
	if len(lines) != 2 || !strings.HasPrefix(lines[0], wantConn) ||
		!strings.HasSuffix(lines[0], fmt.Sprintf(" %s %d", testbed.V4Good1, sshPort)) || lines[1] != wantSum {
		t.Fatalf("ssh output %q; want SSH_CONNECTION from %s to %s port %d, then %q", out.String(),
			testbed.ClientV4, testbed.V4Good1, sshPort, wantSum)
	}
	t.Logf("ssh -o ProxyCommand=... %s: SSH_CONNECTION %q, 1 MiB stdin intact, %v in all", raceName, lines[0], took.Round(time.Millisecond))

	t.Run("git", func(t *testing.T) { gitClone(t, f) })
}

// gitClone makes a repository with one commit in the test's directory and
// clones it over ssh://, git's ssh being ssh with the same ProxyCommand.
func gitClone(t *testing.T, f *sshFixture) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("no git (make deps installs it): %v", err)
	}
	repo, src, clone := filepath.Join(f.dir, "repo.git"), filepath.Join(f.dir, "src"), filepath.Join(f.dir, "clone")
	git := func(argv ...string) {
		t.Helper()
		cmd := exec.Command("git", argv...)
		cmd.Env = append(os.Environ(), "HOME="+f.dir, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
	git("init", "-q", "--bare", repo)
	git("init", "-q", src)
	write(t, filepath.Join(src, "hello.txt"), "over Happy Eyeballs\n")
	git("-C", src, "add", "hello.txt")
	git("-C", src, "-c", "user.name=hev2", "-c", "user.email=hev2@hev2.test", "commit", "-q", "-m", "one")
	git("-C", src, "push", "-q", repo, "HEAD:refs/heads/main")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sshCmd := "ssh " + strings.Join(quoteAll(f.options), " ") + " -o " + quote(proxyCommand())
	cmd := bed.Command(ctx, "env", "HOME="+f.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_SSH_COMMAND="+sshCmd,
		"git", "clone", "-q", "-b", "main", "ssh://root@"+raceName+repo, clone)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone over ssh through hev2-connect --stdio: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(clone, "hello.txt"))
	if err != nil || string(got) != "over Happy Eyeballs\n" {
		t.Fatalf("cloned hello.txt: %q, %v", got, err)
	}
	t.Logf("git clone ssh://root@%s%s: the commit arrived", raceName, repo)
}

// quote makes one shell word of s (GIT_SSH_COMMAND is run by a shell).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = quote(w)
	}
	return out
}
