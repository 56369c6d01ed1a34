fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).unwrap();
    let mut config = wasmtime::Config::new();
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);
    if args.len() > 3 && args[3] == "compact" {
        config.memory_reservation(0).memory_guard_size(0).memory_reservation_for_growth(1 << 20);
    }
    let engine = wasmtime::Engine::new(&config).unwrap();
    let out = engine.precompile_module(&bytes).unwrap();
    std::fs::write(&args[2], out).unwrap();
}
