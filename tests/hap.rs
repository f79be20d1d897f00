//! HAP clips played by sylva without ffmpeg: clips ffmpeg encodes here
//! (HAP, HAP Alpha, HAP Q; whole and in chunks) show, frame for frame in
//! lockstep, what ffmpeg itself decodes them to, whether their BC blocks
//! go to the GPU as they are or are decoded on the CPU; the GPU's
//! conversion of every flavour (HAP Q Alpha and Alpha-Only too, which
//! ffmpeg cannot encode) matches the CPU's; a damaged clip is an error on
//! screen and the show goes on.

use sylva::engine::inputs::hap::gpu::{HapConverter, HapFrame};
use sylva::engine::inputs::hap::{HapCodec, blocks};
use sylva::gpu::read_rgba8;

use crate::media::{frame, media_show, pattern, plays_as_ffmpeg_decodes, side_output, write_clip};
use crate::support;
use crate::support::Checked;

#[test]
fn hap_clips_show_what_ffmpeg_decodes_them_to_as_bc_blocks_and_decoded_on_the_cpu() {
    let frames: Vec<Vec<u8>> = (0..4).map(pattern).collect();
    for (format, chunks) in [
        ("hap", "1"),
        ("hap_alpha", "2"),
        ("hap_q", "1"),
        ("hap_q", "3"),
    ] {
        for as_blocks in [true, false] {
            let name = format!("media/{format}_{chunks}.mov");
            let (root, mut show) = media_show(&format!("hap_{format}_{chunks}_{as_blocks}"), &name);
            let clip = root.join(&name);
            let codec = ["-c:v", "hap", "-format", format, "-chunks", chunks];
            write_clip(&clip, &frames, 10, &codec);
            show.media_in_lockstep();
            show.media_blocks(as_blocks);
            plays_as_ffmpeg_decodes(&mut show, &clip, 4, &format!("{name}, blocks {as_blocks}"));
            let said = show.media_report().join("\n");
            let path = match as_blocks {
                true => "as BC blocks converted on the GPU",
                false => "decoded on the CPU",
            };
            assert!(said.contains(&format!("{name}: 4 uploads")), "{said}");
            assert!(said.contains(path), "{said}");
            std::fs::remove_dir_all(&root).ok();
        }
    }
}

/// Deterministic bytes: xorshift from `seed`.
fn noise(seed: u64, length: usize) -> Vec<u8> {
    let mut state = seed;
    (0..length)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn the_gpus_conversion_of_every_flavour_matches_the_cpus() {
    let gpu = support::gpu();
    let assets = sylva::base::Assets::new(env!("CARGO_MANIFEST_DIR"));
    let converter = HapConverter::new(&gpu, &assets).checked("the HAP pass");
    // A size off the blocks, so the padding is read past too.
    let size = [22, 10];
    for (n, codec) in [
        HapCodec::Hap,
        HapCodec::HapAlpha,
        HapCodec::HapQ,
        HapCodec::HapQAlpha,
        HapCodec::HapAlphaOnly,
    ]
    .into_iter()
    .enumerate()
    {
        let frame_blocks = noise(n as u64 + 7, codec.frame_bytes(size));
        let on_gpu = HapFrame::new(&gpu, &converter, "hap test", size, codec);
        on_gpu.convert(&gpu, &converter, &frame_blocks);
        let shown = read_rgba8(&gpu, &on_gpu.colour.texture).checked("reading it back");
        let mut want = Vec::new();
        blocks::to_rgba(codec, size, &frame_blocks, &mut want);
        let worst = (shown.as_raw().iter().zip(&want))
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap_or(255);
        assert!(
            worst <= 3,
            "{}: {worst} levels between the GPU and the CPU",
            codec.name()
        );
    }
}

#[test]
fn a_damaged_hap_clip_is_an_error_on_screen_and_the_show_goes_on() {
    let (root, mut show) = media_show("hap_damaged", "media/damaged.mov");
    let clip = root.join("media/damaged.mov");
    let frames: Vec<Vec<u8>> = (0..4).map(pattern).collect();
    write_clip(&clip, &frames, 10, &["-c:v", "hap", "-format", "hap_q"]);
    // Every frame's section header claims more than the frame holds.
    let mut bytes = std::fs::read(&clip).checked("reading the clip");
    let Some(at) = bytes.windows(4).position(|w| w == b"mdat") else {
        panic!("no media data in the clip");
    };
    bytes[at + 4..at + 7].copy_from_slice(&[0xFF, 0xFF, 0x7F]);
    std::fs::write(&clip, bytes).checked("damaging it");
    show.media_in_lockstep();
    let mut output = side_output(&show);
    for _ in 0..3 {
        frame(&mut show, &mut output, 0.1);
    }
    let said = support::error_messages(&show).join("\n");
    assert!(said.contains("HAP frame 0"), "{said}");
    std::fs::remove_dir_all(&root).ok();
}
