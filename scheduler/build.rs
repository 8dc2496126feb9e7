// Builds the BPF hot path (bpf/main.bpf.c) into a libbpf-rs skeleton and turns the shared
// interface header (bpf/intf.h) into Rust with bindgen.
fn main() {
    // The BPF builder tracks only the files it names itself (main.bpf.c and a few includes), not
    // bpf/policy/: a change there must rebuild too. A directory makes cargo scan all of it.
    println!("cargo:rerun-if-changed=bpf");
    scx_cargo::BpfBuilder::new()
        .expect("BPF builder: is clang >= 18 installed? set BPF_CLANG=clang-19")
        .enable_intf("bpf/intf.h", "bpf_intf.rs")
        .enable_skel("bpf/main.bpf.c", "bpf")
        .build()
        .expect("building the BPF program failed");
}
