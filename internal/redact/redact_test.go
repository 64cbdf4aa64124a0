package redact

import (
	"strings"
	"testing"
)

// TestString: each class of secret is removed, and every other word of the command stays.
func TestString(t *testing.T) {
	r, err := New([]string{"my-registered-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, in string
		gone     []string // must not appear in the output
		want     string   // the whole output
	}{
		{"private key", "echo '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----' > k",
			[]string{"b3BlbnNzaC1rZXktdjEAAAAA"}, "echo '[REDACTED:private-key]' > k"},
		{"private key without end keeps the words after it", `printf '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA' > key.pem && chmod 600 key.pem`,
			[]string{"MIIEowIBAAKCAQEA"}, `printf '[REDACTED:private-key]' > key.pem && chmod 600 key.pem`},
		{"private key without end at the end", "cat <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA",
			[]string{"MIIEowIBAAKCAQEA"}, "cat <<EOF\n[REDACTED:private-key]"},
		{"aws access key", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE aws s3 ls", []string{"AKIAIOSFODNN7EXAMPLE"}, "AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key] aws s3 ls"},
		{"github token", "gh auth login --with-token ghp_16C7e42F292c6912E7710c838347Ae178B4a --web", []string{"ghp_16C7"}, "gh auth login --with-token [REDACTED:github-token] --web"},
		{"gitlab token", "curl -H 'PRIVATE-TOKEN: glpat-xxxxxxxxxxxxxxxxxxxx' https://gitlab.com/api", []string{"glpat-xxxxxxxxxxxxxxxxxxxx"}, "curl -H 'PRIVATE-TOKEN: [REDACTED]' https://gitlab.com/api"},
		{"bearer header", `curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc" https://api`, []string{"eyJhbGciOiJIUzI1NiJ9"}, `curl -H "Authorization: Bearer [REDACTED]" https://api`},
		{"password in url", "git push https://alice:s3cr3tPass@example.com/repo.git main", []string{"s3cr3tPass"}, "git push https://alice:[REDACTED]@example.com/repo.git main"},
		{"password assignment", "mysql --user=root --password=hunter22 db", []string{"hunter22"}, "mysql --user=root --password=[REDACTED] db"},
		{"assignment before a pipe", "token=abcdef|tee log", []string{"abcdef"}, "token=[REDACTED]|tee log"},
		{"token assignment quoted", `deploy token="abc def ghi" --now`, []string{"abc def ghi"}, `deploy token=[REDACTED] --now`},
		{"unclosed quote", `deploy token="abcdefgh --now`, []string{"abcdefgh"}, `deploy token=[REDACTED] --now`},
		{"password flag with space", "tool --password hunter22 run", []string{"hunter22"}, "tool --password [REDACTED] run"},
		{"password flag quoted", "tool --password 'hun ter' run", []string{"hun ter"}, "tool --password [REDACTED] run"},
		{"registered secret", "echo my-registered-secret-value done", []string{"my-registered-secret-value"}, "echo [REDACTED:registered] done"},
		// Assignments whose name says secret, as the environment is redacted (EnvPair): the
		// name holds no word boundary before TOKEN or PASSWORD.
		{"secret variable assignment", "GITHUB_TOKEN=abc123secretvalue git push origin main", []string{"abc123secretvalue"}, "GITHUB_TOKEN=[REDACTED:env-secret] git push origin main"},
		{"exported password", "export PGPASSWORD=hunter2hunter2 && psql -h db", []string{"hunter2hunter2"}, "export PGPASSWORD=[REDACTED:env-secret] && psql -h db"},
		{"aws secret key", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG aws s3 ls", []string{"wJalrXUtnFEMI"}, "AWS_SECRET_ACCESS_KEY=[REDACTED:env-secret] aws s3 ls"},
		{"env wrapper, quoted", `env DB_PASSWORD="a b c" ./run; echo ok`, []string{"a b c"}, "env DB_PASSWORD=[REDACTED:env-secret] ./run; echo ok"},
		{"basic authorization", "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' https://x", []string{"dXNlcjpwYXNzd29yZA"}, "curl -H 'Authorization: Basic [REDACTED]' https://x"},
		{"token authorization", `curl -H "Authorization: token ghp_short" x`, []string{"ghp_short"}, `curl -H "Authorization: token [REDACTED]" x`},
		{"curl user password", "curl -u admin:s3cr3tpass https://x -o out", []string{"s3cr3tpass"}, "curl -u admin:[REDACTED] https://x -o out"},
		{"curl --user=", "curl --user=admin:s3cr3tpass https://x", []string{"s3cr3tpass"}, "curl --user=admin:[REDACTED] https://x"},
		{"not a secret name", "FOO=bar LANG=C make -j4", nil, "FOO=bar LANG=C make -j4"},
		{"git push -u keeps its words", "git push -u origin HEAD:main", nil, "git push -u origin HEAD:main"},
		{"nothing secret", "ls -la /tmp && echo monkey=banana", nil, "ls -la /tmp && echo monkey=banana"},
		{"assignment does not cross a line", "password=\nnext line", nil, "password=\nnext line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := r.String(tc.in)
			for _, g := range tc.gone {
				if strings.Contains(got, g) {
					t.Errorf("String(%q) = %q keeps %q", tc.in, got, g)
				}
			}
			if got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestEnvPair: a secret-named variable loses its value, never its name; others keep theirs
// unless the value has a secret's shape.
func TestEnvPair(t *testing.T) {
	var r *Redactor
	for in, want := range map[string]string{
		"GITHUB_TOKEN=abc": "GITHUB_TOKEN=[REDACTED:env-secret]",
		"DB_PASSWORD=x y":  "DB_PASSWORD=[REDACTED:env-secret]",
		"LANG=C.UTF-8":     "LANG=C.UTF-8",
		"X=ghp_16C7e42F292c6912E7710c838347Ae178B4a": "X=[REDACTED:github-token]",
	} {
		if got := r.EnvPair(in); got != want {
			t.Errorf("EnvPair(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewRefusesShortSecrets(t *testing.T) {
	if _, err := New([]string{"abc"}); err == nil {
		t.Fatal("New accepted a 3-byte secret")
	}
}
