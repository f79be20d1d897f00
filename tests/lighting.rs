//! Lighting out: the `[[dmx]]` fixtures of an outputs file, received on
//! 127.0.0.1 by an sACN receiver (the `sacn` crate's, with universe
//! synchronisation) and an Art-Net socket, carry the canvas's colours at
//! their pixels' places, in their channel order, gamma and brightness; a
//! fixture file with a fault is a `file:line` error; the end of the show
//! sends every channel black. Lighting in: a desk's 16-bit fader over
//! Art-Net sets a parameter and a channel over sACN fires an action,
//! through a mapping file's `[[dmx]]`.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use sylva::control::ControlOptions;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget};
use sylva::params::Value;
use sylva::show::{Show, ShowOptions};

use crate::osc_rig::rig_with;
use crate::support;

/// The canvas of the tests.
const CANVAS: [u32; 2] = [120, 60];

/// A linear gradient, so a rectangle's mean is the colour at its centre.
const GRADIENT: &str = "@fragment\n\
    fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
    \x20   return vec4<f32>(in.uv.x * 0.8, in.uv.y * 0.8, 0.3, 1.0);\n}\n";

/// A free UDP port on 127.0.0.1 (bound, then let go).
fn free_port() -> u16 {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("a UDP port");
    socket.local_addr().expect("its address").port()
}

fn folder(name: &str, outputs: &str) -> PathBuf {
    let preset = "layers = [\"shader.ramp\"]\n[params]\n\"shader.ramp.file\" = \"shader/ramp.wgsl\"\n\"master.tonemap\" = \"clamp\"\n";
    support::show_folder(
        name,
        &[
            ("presets/ramp.toml", preset),
            ("shaders/shader/ramp.wgsl", GRADIENT),
            ("outputs/lights.toml", outputs),
        ],
    )
}

fn start(root: PathBuf) -> Show {
    support::start(
        ShowOptions {
            outputs: Some("lights".into()),
            ..ShowOptions::new(root, "ramp")
        },
        OUTPUT_FORMAT,
    )
}

fn frame(show: &mut Show, canvas: &mut RenderTarget) {
    show.frame(1.0 / 60.0, None, canvas, |_, _| {});
}

/// The gradient's colour at `(u, v)`, as the screen shows it (sRGB, 0-255).
fn gradient_at(u: f32, v: f32) -> [f32; 3] {
    let linear = [u * 0.8, v * 0.8, 0.3];
    linear.map(|c| support::display_encoded(c) * 255.0)
}

/// `(v / 255)^gamma * brightness`, 0-255.
fn curved(v: f32, gamma: f32, brightness: f32) -> f32 {
    (v / 255.0).powf(gamma) * brightness * 255.0
}

fn near(got: u8, want: f32, what: &str) {
    assert!(
        (f32::from(got) - want).abs() <= 3.0,
        "{what}: sent {got}, the canvas gives {want:.1}"
    );
}

/// Art-Net `ArtDmx` packets on `socket` until `deadline`: the last of
/// each universe.
fn artnet_universes(socket: &UdpSocket, wanted: usize) -> Vec<(u16, Vec<u8>)> {
    let mut got: Vec<(u16, Vec<u8>)> = Vec::new();
    let mut buffer = [0u8; 1024];
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.len() < wanted && Instant::now() < deadline {
        let Ok((length, _)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        if let Ok(artnet_protocol::ArtCommand::Output(output)) =
            artnet_protocol::ArtCommand::from_buffer(&buffer[..length])
        {
            let universe = u16::from(output.port_address);
            if !got.iter().any(|(u, _)| *u == universe) {
                got.push((universe, output.data.as_ref().clone()));
            }
        }
    }
    got.sort_by_key(|(u, _)| *u);
    got
}

#[test]
fn fixtures_carry_the_canvas_at_their_pixels_over_sacn_and_artnet() {
    let _port = support::SACN_PORT.lock().unwrap_or_else(|e| e.into_inner());
    let (sacn_port, artnet_port) = (5568, free_port());
    let outputs = format!(
        "[[dmx]]\nname = \"strip\"\nprotocol = \"sacn\"\nto = \"127.0.0.1:{sacn_port}\"\n\
         universe = 7\nchannel = 505\n\
         strip = {{ from = [0.0, 0.5], to = [1.0, 0.5], pixels = 6 }}\n\n\
         [[dmx]]\nname = \"wall\"\nprotocol = \"artnet\"\nto = \"127.0.0.1:{artnet_port}\"\n\
         universe = 3\norder = \"GRB\"\ngamma = 2.2\nbrightness = 0.5\n\
         matrix = {{ region = [0.5, 0.0, 0.5, 1.0], columns = 3, rows = 2, zigzag = true }}\n\n\
         [[dmx]]\nname = \"spot\"\nprotocol = \"artnet\"\nto = \"127.0.0.1:{artnet_port}\"\n\
         universe = 4\nsource = \"layer:shader.ramp\"\n\
         strip = {{ from = [0.2, 0.4], to = [0.3, 0.4], pixels = 1 }}\n"
    );
    let root = folder("lighting_out", &outputs);
    let artnet = UdpSocket::bind(("127.0.0.1", artnet_port)).expect("the Art-Net port");
    artnet
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("a timeout");
    let sacn_at = SocketAddr::from(([127, 0, 0, 1], sacn_port));
    let mut sacn = sacn::receive::SacnReceiver::with_ip(sacn_at, None).expect("an sACN receiver");
    sacn.set_is_multicast_enabled(false).expect("unicast");
    sacn.listen_universes(&[7, 8]).expect("universes 7 and 8");

    let mut show = start(root);
    let mut canvas = RenderTarget::new(&show.ground.gpu.device, "canvas", CANVAS, OUTPUT_FORMAT);
    for _ in 0..6 {
        frame(&mut show, &mut canvas);
    }
    let status =
        (show.lighting_status()).unwrap_or_else(|| panic!("{:?}", support::error_messages(&show)));
    assert!(
        status.contains("3 fixtures, 13 pixels in 4 universes"),
        "{status}"
    );

    // sACN: 505-510 holds the first two pixels, 511-512 cannot hold the
    // third, so the other four start universe 8; both come together at
    // universe 7's synchronisation packet.
    let mut universes: Vec<(u16, Vec<u8>)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while universes.len() < 2 && Instant::now() < deadline {
        frame(&mut show, &mut canvas);
        if let Ok(data) = sacn.recv(Some(Duration::from_millis(100))) {
            for d in data {
                assert_eq!(
                    d.sync_uni, 7,
                    "universe {} is synchronised by 7",
                    d.universe
                );
                universes.retain(|(u, _)| *u != d.universe);
                universes.push((d.universe, d.values));
            }
        }
    }
    universes.sort_by_key(|(u, _)| *u);
    assert_eq!(
        universes.iter().map(|u| u.0).collect::<Vec<_>>(),
        vec![7, 8],
        "both universes came"
    );
    // Each universe's values start with the start code.
    let (seven, eight) = (&universes[0].1[1..], &universes[1].1[1..]);
    let strip_pixel = |i: usize| gradient_at((i as f32 + 0.5) / 6.0, 0.5);
    for i in 0..6 {
        let channels = if i < 2 {
            &seven[504 + i * 3..]
        } else {
            &eight[(i - 2) * 3..]
        };
        for (c, want) in strip_pixel(i).iter().enumerate() {
            near(channels[c], *want, &format!("strip pixel {i}"));
        }
    }
    assert_eq!(&seven[510..512], &[0; 2], "no pixel straddles 7 and 8");

    // Art-Net: a 3 x 2 matrix on the right half, the second row wired
    // right to left, green first, gamma 2.2 at half brightness.
    let got = artnet_universes(&artnet, 2);
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        vec![3, 4],
        "universes 3 and 4 came"
    );
    // The spot reads the layer's own picture (linear light, before the
    // master section): the gradient at its centre.
    for (c, want) in gradient_at(0.25, 0.4).iter().enumerate() {
        near(got[1].1[c], *want, "the spot on the layer");
    }
    let wall = &got[0].1;
    for (k, (column, row)) in [(0, 0), (1, 0), (2, 0), (2, 1), (1, 1), (0, 1)]
        .iter()
        .enumerate()
    {
        let u = 0.5 + (*column as f32 + 0.5) / 6.0;
        let v = (*row as f32 + 0.5) / 2.0;
        let [r, g, b] = gradient_at(u, v);
        let pixel = &wall[k * 3..k * 3 + 3];
        near(
            pixel[0],
            curved(g, 2.2, 0.5),
            &format!("wall pixel {k} green"),
        );
        near(
            pixel[1],
            curved(r, 2.2, 0.5),
            &format!("wall pixel {k} red"),
        );
        near(
            pixel[2],
            curved(b, 2.2, 0.5),
            &format!("wall pixel {k} blue"),
        );
    }

    // The end of the show: every channel at 0, the last packet of all.
    let line = show.finish_lighting().expect("a line");
    assert!(line.contains("frames sent"), "{line}");
    let mut last = None;
    let mut buffer = [0u8; 1024];
    while let Ok((length, _)) = artnet.recv_from(&mut buffer) {
        if let Ok(artnet_protocol::ArtCommand::Output(output)) =
            artnet_protocol::ArtCommand::from_buffer(&buffer[..length])
        {
            last = Some(output.data.as_ref().clone());
        }
    }
    let last = last.expect("packets came until the end");
    assert!(
        last.iter().all(|v| *v == 0),
        "the fixtures go black at the end: {last:?}"
    );
}

#[test]
fn a_fault_in_a_fixture_is_an_error_at_its_line_and_the_show_goes_on() {
    let outputs = "[[dmx]]\nname = \"strip\"\nprotocol = \"sacn\"\n\
                   universe = 70000\nstrip = { from = [0.0, 0.5], to = [1.0, 0.5], pixels = 6 }\n";
    let root = folder("lighting_fault", outputs);
    let mut show = start(root);
    let mut canvas = RenderTarget::new(&show.ground.gpu.device, "canvas", CANVAS, OUTPUT_FORMAT);
    frame(&mut show, &mut canvas);
    let errors = support::error_messages(&show);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("outputs/lights.toml:4") && e.contains("universe 70000")),
        "{errors:?}"
    );
    assert!(show.lighting_status().is_none());
}

#[test]
fn a_desk_plays_a_parameter_over_artnet_and_fires_an_action_over_sacn() {
    let _artnet = support::ARTNET_PORT
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let _sacn = support::SACN_PORT.lock().unwrap_or_else(|e| e.into_inner());
    let mapping = "[[dmx]]\nuniverse = 2\nchannel = 5\nbits = 16\nprotocol = \"artnet\"\n\
                   param = \"master.brightness\"\nrange = [0.0, 2.0]\n\n\
                   [[dmx]]\nuniverse = 9\nchannel = 1\nprotocol = \"sacn\"\naction = \"preset:b\"\n";
    let root = support::show_folder(
        "lighting_in",
        &[
            ("presets/a.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/b.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/mappings/desk.toml", mapping),
        ],
    );
    let show = support::show(root.clone(), "a", OUTPUT_FORMAT);
    let mut rig = rig_with(show, ControlOptions::default(), Duration::from_secs(10));
    rig.frame();
    let brightness = |rig: &crate::osc_rig::Rig| match rig.show.registry.target("master.brightness")
    {
        Some(Value::Float(v)) => *v,
        _ => f32::NAN,
    };

    // A 16-bit fader at 0x8000 over Art-Net: half of [0, 2].
    let desk = UdpSocket::bind("127.0.0.1:0").expect("the desk's socket");
    let mut channels = vec![0u8; 512];
    channels[4] = 0x80;
    let packet = artnet_protocol::ArtCommand::Output(artnet_protocol::Output {
        port_address: artnet_protocol::PortAddress::try_from(2u16).expect("universe 2"),
        data: channels.into(),
        ..artnet_protocol::Output::default()
    })
    .write_to_buffer()
    .expect("an ArtDmx packet");
    rig.until("the fader moves master.brightness", |rig| {
        desk.send_to(&packet, ("127.0.0.1", 6454)).ok();
        (brightness(rig) - 2.0 * 32768.0 / 65535.0).abs() < 1e-4
    });

    // Channel 1 of sACN universe 9 past half: the next preset.
    let mut source =
        sacn::source::SacnSource::with_ip("desk", SocketAddr::from(([127, 0, 0, 1], 0)))
            .expect("an sACN source");
    source.register_universes(&[9]).expect("universe 9");
    let mut data = vec![0u8; 513];
    data[1] = 255;
    let to = Some(SocketAddr::from(([127, 0, 0, 1], 5568)));
    let deadline = Instant::now() + Duration::from_secs(10);
    while rig.show.preset() != Some("b") {
        assert!(
            Instant::now() < deadline,
            "the desk's button did not load preset b"
        );
        source.send(&[9], &data, None, to, None).ok();
        rig.frame();
    }
    std::fs::remove_dir_all(root).ok();
}
