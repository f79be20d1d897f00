// `sylva bench`'s warm-up: a chain of multiply-adds per thread that keeps
// every core busy, so the GPU is at its working clocks when the measured
// frames begin (an idle H200 drops to 345 of its 1,980 MHz within a
// second, and its first ~200 ms of new work run there).

@group(0) @binding(0) var<storage, read_write> sink: array<f32>;

@compute @workgroup_size(256)
fn warm_up(@builtin(global_invocation_id) global: vec3<u32>) {
    var x = f32(global.x);
    for (var k = 0u; k < 1024u; k++) {
        x = fma(x, 0.999, 0.5);
    }
    // Written, so that the chain is not optimised away.
    sink[global.x] = x;
}
