package helper

import "testing"

// The filter assembles for every set of rules, within seccomp's limits
// (a jump of at most 255 instructions, 4096 instructions in all), with a
// return at every end. The sandbox's tests run it (go test ./sandbox).
func TestTheFilterAssemblesForEveryRuleSet(t *testing.T) {
	if seccompNative.audit == 0 {
		t.Skip("no filter for this architecture")
	}
	for _, r := range []filterRules{{unix: true}, {setID: true}, {fileCaps: true}, {unix: true, setID: true}, {setID: true, fileCaps: true}, {unix: true, setID: true, fileCaps: true}} {
		prog, err := buildFilter(r, seccompNative, seccompCompat)
		if err != nil {
			t.Errorf("%+v: %v", r, err)
			continue
		}
		if len(prog) == 0 || len(prog) > 4096 {
			t.Errorf("%+v: %d instructions", r, len(prog))
		}
		const ret = 0x06 // BPF_RET
		if last := prog[len(prog)-1]; last.Code&0x07 != ret {
			t.Errorf("%+v: the program does not end with a return: %+v", r, last)
		}
	}
}
