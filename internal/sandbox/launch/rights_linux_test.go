package launch

import "testing"

func TestRightsFor(t *testing.T) {
	if r := rightsFor(accessWrite, false, false); r&^rightsFileOnly != 0 {
		t.Errorf("file rights %b include directory-only rights", r)
	}
	if r := rightsFor(accessWrite, true, true); r != rightsRead {
		t.Errorf("split writable entry gets %b, want read-only %b", r, rightsRead)
	}
	if r := rightsFor(accessRead, true, false); r&rightsWriteDir&^rightsRead != 0 {
		t.Errorf("read-only rights %b include write rights", r)
	}
}
