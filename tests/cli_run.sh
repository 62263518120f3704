#!/bin/sh
# cli_run.sh FUSEC SOURCEDIR: `fusec run --cpu` end to end: exit codes, exact
# messages, the files written (and none left behind on failure), summaries,
# seeded inputs, .npy inputs. POSIX sh and coreutils only, so it also runs on
# the GPU machine. Prints "N passed, N failed"; exits 1 if anything failed.
set -u
fusec=$1
src=$2
case $fusec in /*) ;; *) fusec=$(pwd)/$fusec ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fusec-cli-run.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL: $*"
	[ -s out ] && sed 's/^/  stdout: /' out
	[ -s err ] && sed 's/^/  stderr: /' err
}

# expect NAME RC -- COMMAND...: run, check the exit status
expect() {
	name=$1 rc=$2
	shift 3
	"$@" >out 2>err
	got=$?
	if [ "$got" -eq "$rc" ]; then ok; else bad "$name: exit $got, expected $rc"; fi
}
# same_text NAME FILE TEXT: the file holds exactly TEXT (one line)
same_text() {
	if [ "$(cat "$2")" = "$3" ]; then ok; else bad "$1: expected '$3'"; fi
}
# files NAME DIR LIST: the directory holds exactly these names
files() {
	got=$(ls -A "$2" | tr '\n' ' ')
	if [ "$got" = "$3" ]; then ok; else bad "$1: $2 holds '$got', expected '$3'"; fi
}

printf 'in x: f32[B, N]\ne = exp(x - max(x))\nout y = e / sum(e)\n' >softmax.fz
printf 'in x: f32[N]\nin s: f32\nout y = x * s\n' >scale.fz
printf 'in x: f32[N]\nin y: f32[N]\nout a = x + y\nout b = x - y\nout c = x * y\n' >three.fz
printf 'in n: i32[N]\nout m = n * 2\n' >ints.fz
printf 'in x: f32[N]\nout y = x +\n' >broken.fz

# ---- usage ---------------------------------------------------------------------
expect help 0 -- "$fusec" run --help
if grep -q '^usage: fusec run FILE.fz' out; then ok; else bad "help: no usage line"; fi
expect no_file 2 -- "$fusec" run --cpu
expect unknown_option 2 -- "$fusec" run softmax.fz --cpu --fast
same_text unknown_option err "fusec: unknown option '--fast' (see fusec run --help)"
expect dim_syntax 2 -- "$fusec" run softmax.fz --cpu --dim B
same_text dim_syntax err "fusec: --dim expects NAME=VALUE, got 'B'"
expect dim_size 2 -- "$fusec" run softmax.fz --cpu --dim B=-1
same_text dim_size err "fusec: --dim B=-1: the size must be an integer from 0 to 2^62"
expect dim_too_big 2 -- "$fusec" run softmax.fz --cpu --dim B=4611686018427387905
same_text dim_too_big err "fusec: --dim B=4611686018427387905: the size must be an integer from 0 to 2^62"
expect dim_missing 2 -- "$fusec" run softmax.fz --cpu --dim
same_text dim_missing err "fusec: --dim expects a value"
expect seed 2 -- "$fusec" run softmax.fz --cpu --seed x1
same_text seed err "fusec: --seed expects a non-negative integer, got 'x1'"
expect check_cpu 2 -- "$fusec" run softmax.fz --cpu --check
expect interpret_cpu 2 -- "$fusec" run softmax.fz --cpu --interpret
same_text interpret_cpu err "fusec: --interpret runs on the GPU's interpreter: it cannot be used with --cpu"
expect two_files 2 -- "$fusec" run softmax.fz scale.fz --cpu
expect in_twice 2 -- "$fusec" run scale.fz --cpu --in s=1 --in s=2 --dim N=2
same_text in_twice err "fusec: --in: input 's' is given twice"

# ---- program and input errors ----------------------------------------------------
expect broken 1 -- "$fusec" run broken.fz --cpu
if head -n 1 err | grep -q '^broken.fz:2:'; then ok; else bad "broken: no diagnostic"; fi
expect missing_program 1 -- "$fusec" run nothere.fz --cpu
expect unbound 1 -- "$fusec" run softmax.fz --cpu --dim B=2
same_text unbound err "fusec: dim 'N' is not bound: pass --dim N=SIZE or an input that has it"
expect unknown_dim 1 -- "$fusec" run softmax.fz --cpu --dim K=2
same_text unknown_dim err "fusec: --dim: the program has no dim 'K' (its dims: B, N)"
expect unknown_input 1 -- "$fusec" run softmax.fz --cpu --in z=1
same_text unknown_input err "fusec: --in: the program has no input 'z' (its inputs: x)"
expect bad_number 1 -- "$fusec" run ints.fz --cpu --in n=2.5 --dim N=3
same_text bad_number err "fusec: input 'n': '2.5' is not a valid i32"
expect missing_npy 1 -- "$fusec" run softmax.fz --cpu --in x=nothere.npy
same_text missing_npy err "fusec: input 'x': nothere.npy: cannot open: No such file or directory"
printf 'not an array' >junk.npy
expect junk_npy 1 -- "$fusec" run softmax.fz --cpu --in x=junk.npy
same_text junk_npy err "fusec: input 'x': junk.npy: not a .npy file (bad magic)"

# ---- success: files and summaries ----------------------------------------------------
expect softmax 0 -- "$fusec" run softmax.fz --cpu --dim B=2 --dim N=3 --out-dir o1
files softmax_files o1 "y.npy "
if grep -Eq '^y f32\[2, 3\] min=[0-9.e-]+ max=[0-9.e-]+ mean=0.333333 nan=0 o1/y.npy$' out; then ok; else bad "softmax: summary"; fi
expect softmax_again 0 -- "$fusec" run softmax.fz --cpu --dim B=2 --dim N=3 --out-dir o2/
if cmp -s o1/y.npy o2/y.npy; then ok; else bad "the same seed gave different inputs"; fi
expect softmax_seed 0 -- "$fusec" run softmax.fz --cpu --dim B=2 --dim N=3 --out-dir o3 --seed 7
if cmp -s o1/y.npy o3/y.npy; then bad "another seed gave the same inputs"; else ok; fi
if [ "$(head -c 6 o1/y.npy | od -An -c | tr -d ' ')" = '223NUMPY' ]; then ok; else bad "y.npy: no .npy magic"; fi
# 128-byte header + 6 floats
if [ "$(wc -c <o1/y.npy)" -eq 152 ]; then ok; else bad "y.npy: size $(wc -c <o1/y.npy)"; fi

expect fill 0 -- "$fusec" run scale.fz --cpu --in x=1.5 --in s=2 --dim N=4 --out-dir o4
same_text fill out "y f32[4] min=3 max=3 mean=3 nan=0 o4/y.npy"
# an output as the next program's input; N comes from the array
expect from_npy 0 -- "$fusec" run scale.fz --cpu --in x=o4/y.npy --in s=-0.5 --out-dir o5
same_text from_npy out "y f32[4] min=-1.5 max=-1.5 mean=-1.5 nan=0 o5/y.npy"
expect npy_shape 1 -- "$fusec" run scale.fz --cpu --in x=o4/y.npy --dim N=5
same_text npy_shape err "fusec: input 'x': expected f32[N] with N = 5, got f32[4]"
expect npy_dtype 1 -- "$fusec" run ints.fz --cpu --in n=o4/y.npy
same_text npy_dtype err "fusec: input 'n': o4/y.npy holds f32[4], but the input is i32"
expect default_dir 0 -- "$fusec" run scale.fz --cpu --in s=1 --dim N=0
same_text default_dir out "y f32[0] empty nan=0 ./y.npy"
files default_dir_files . "broken.fz err ints.fz junk.npy o1 o2 o3 o4 o5 out scale.fz softmax.fz three.fz y.npy "
rm -f y.npy

# bf16 inputs read f32 files; bf16 outputs are written as <f4
printf 'in x: bf16[N]\nout y = x * 1\n' >half.fz
expect bf16 0 -- "$fusec" run half.fz --cpu --in x=o4/y.npy --out-dir o6
same_text bf16 out "y bf16[4] min=3 max=3 mean=3 nan=0 o6/y.npy"
if grep -q "'descr': '<f4'" o6/y.npy; then ok; else bad "bf16 output is not <f4"; fi

# integers: random values are small integers; a NaN count for floats
expect ints 0 -- "$fusec" run ints.fz --cpu --dim N=1000 --out-dir o7
if grep -Eq '^m i32\[1000\] min=-16 max=16 mean=[0-9.e-]+ nan=0 o7/m.npy$' out; then ok; else bad "ints: summary"; fi
printf 'in x: f32[N]\nout y = log(x)\n' >log.fz
expect nan_count 0 -- "$fusec" run log.fz --cpu --in x=-1 --dim N=3 --out-dir o8
same_text nan_count out "y f32[3] all-nan nan=3 o8/y.npy"

# ---- failures leave nothing behind ---------------------------------------------------
expect empty_max 1 -- "$fusec" run softmax.fz --cpu --dim B=2 --dim N=0 --out-dir o9
same_text empty_max err "fusec: softmax.fz: max at 2:13 reduces an empty axis (N = 0)"
if [ -e o9 ]; then bad "empty_max: o9 was created by a run that wrote nothing"; else ok; fi
touch afile
expect out_dir_file 1 -- "$fusec" run scale.fz --cpu --in s=1 --dim N=2 --out-dir afile
same_text out_dir_file err "fusec: output directory 'afile' is not a directory"
# --out-dir is created with its parents, and only when outputs are written
expect out_dir_deep 0 -- "$fusec" run scale.fz --cpu --in s=1 --dim N=2 --out-dir no/such/dir
files out_dir_deep_files no/such/dir "y.npy "
# an output cannot replace what is in its way: nothing is written, not even
# the outputs before it, and no temporary file remains
mkdir -p o10/c.npy
expect rename_fails 1 -- "$fusec" run three.fz --cpu --dim N=3 --out-dir o10
same_text rename_fails err "fusec: cannot write output 'c': o10/c.npy: Is a directory"
files rename_fails_files o10 "c.npy "
if [ "$(id -u)" != 0 ]; then
	mkdir o11 && chmod 555 o11
	expect readonly 1 -- "$fusec" run three.fz --cpu --dim N=3 --out-dir o11
	files readonly_files o11 ""
	chmod 755 o11
fi

# ---- options as getopt_long takes them: --opt=VALUE and --opt VALUE, anywhere ----------
expect space_form 0 -- "$fusec" --emit ir softmax.fz
if head -n 1 out | grep -q '^# program softmax'; then ok; else bad "space_form: not the IR"; fi
expect eq_form 0 -- "$fusec" run --cpu --dim=N=2 --in=s=3 --in x=1 scale.fz --out-dir=o12
same_text eq_form out "y f32[2] min=3 max=3 mean=3 nan=0 o12/y.npy"
expect options_after_file 0 -- "$fusec" softmax.fz --emit ir --no-fuse
expect emit_missing 2 -- "$fusec" softmax.fz --emit
same_text emit_missing err "fusec: --emit expects a value"
expect flag_with_value 2 -- "$fusec" --no-fuse=1 softmax.fz
same_text flag_with_value err "fusec: unknown option '--no-fuse=1' (see fusec --help)"
expect short_unknown 2 -- "$fusec" run -x softmax.fz
same_text short_unknown err "fusec: unknown option '-x' (see fusec run --help)"
expect cache_space 0 -- "$fusec" cache list --dir "$tmp/no-cache"
same_text cache_space out "$tmp/no-cache: 0 entries, 0 B"
expect end_of_options 1 -- "$fusec" run --cpu -- --not-an-option.fz
same_text end_of_options err "fusec: cannot read --not-an-option.fz: No such file or directory"

# ---- exit statuses: 77 where a GPU is needed and there is none ---------------------------
if FUSEC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$fusec" run scale.fz --in s=1 --dim N=2 --out-dir o13 >out 2>err; then
	bad "gpu_run: succeeded without a driver"
elif [ $? -eq 77 ]; then ok; else bad "gpu_run: exit $?, expected 77"; fi
if grep -q "^fusec: no CUDA driver: " err; then ok; else bad "gpu_run: message"; fi
if [ -e o13 ]; then bad "gpu_run: created its output directory"; else ok; fi
FUSEC_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$fusec" bench softmax.fz --dim B=2 --dim N=3 >out 2>err
if [ $? -eq 77 ]; then ok; else bad "gpu_bench: exit status, expected 77"; fi
expect device_range 2 -- "$fusec" run scale.fz --device 1024
same_text device_range err "fusec: --device expects an integer from 0 to 1023, got '1024'"
expect device_word 2 -- "$fusec" run scale.fz --device=first
same_text device_word err "fusec: --device expects an integer from 0 to 1023, got 'first'"
expect help_statuses 0 -- "$fusec" --help
if grep -q '77 no usable GPU' out; then ok; else bad "help_statuses: --help has no exit status table"; fi
expect run_help_bf16 0 -- "$fusec" run --help
if grep -q 'bf16 values travel as float32 files' out; then ok; else bad "run_help_bf16: not in run --help"; fi

# ---- values the dtype cannot hold are refused, floats as integers --------------------------
printf 'in t: f16\nout y = t * 1\n' >h16.fz
expect f16_range 1 -- "$fusec" run h16.fz --cpu --in t=70000 --out-dir o14
same_text f16_range err "fusec: input 't': '70000' is not a valid f16 (out of range)"
expect f16_max 0 -- "$fusec" run h16.fz --cpu --in t=65504 --out-dir o14
expect f16_inf 0 -- "$fusec" run h16.fz --cpu --in t=inf --out-dir o14
expect f32_range 1 -- "$fusec" run scale.fz --cpu --in s=1e39 --dim N=1
same_text f32_range err "fusec: input 's': '1e39' is not a valid f32 (out of range)"
expect i32_range 1 -- "$fusec" run ints.fz --cpu --in n=3000000000 --dim N=1
same_text i32_range err "fusec: input 'n': '3000000000' is not a valid i32 (out of range)"

# ---- --arch names one this NVRTC compiles for, and the message lists them -------------------
for a in sm_55 sm_200 sm_50a sm_90a compute_ sm_x; do
	expect "arch_$a" 2 -- "$fusec" --emit=ptx --arch=$a softmax.fz
	if grep -q "^fusec: invalid architecture '$a': this NVRTC compiles for sm_[0-9]*, sm_" err; then ok; else bad "arch_$a: message"; fi
done

# ---- long names are shortened in messages ------------------------------------------------------
long=$(head -c 100000 /dev/zero | tr '\0' a)
printf 'in x: f32\nout y = %s\n' "$long" >long.fz
expect long_name 1 -- "$fusec" --emit=ir long.fz
if [ "$(head -n 1 err | wc -c)" -lt 200 ]; then ok; else bad "long_name: a $(head -n 1 err | wc -c)-byte message line"; fi
if head -n 1 err | grep -q "^long.fz:2:9: error: unknown name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'$"; then ok; else bad "long_name: message"; fi
expect long_dim 1 -- "$fusec" run scale.fz --cpu --dim "$long=3"
if [ "$(wc -c <err)" -lt 200 ]; then ok; else bad "long_dim: a $(wc -c <err)-byte message"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
