//! The colony step on the CPU, brute force (every attraction against every
//! node), written as plainly as possible: the reference the GPU kernels are
//! held to in the tests, and the meaning of each step in one place.

use super::sim::{NodeInfo, StepParams, random01, seed_nodes};

/// A colony in CPU memory.
#[derive(Debug, Clone, PartialEq)]
pub struct ColonyCpu {
    /// xyz, w = 1 active.
    pub attractors: Vec<[f32; 4]>,
    /// xyz, w = growth t.
    pub nodes: Vec<[f32; 4]>,
    /// Attributes.
    pub info: Vec<NodeInfo>,
    /// Parent/child pairs.
    pub edges: Vec<[u32; 2]>,
    /// Each node's pull (fixed-point sum and count) when it last grew.
    last_pull: Vec<[i32; 4]>,
}

const FIXED: f32 = 65_536.0;

impl ColonyCpu {
    /// The same start as the GPU: the attractions and the seed nodes.
    pub fn new(attractors: &[[f32; 3]], seed_count: u32, params: &StepParams) -> Self {
        let (nodes, info) = seed_nodes(attractors, seed_count, params);
        Self {
            attractors: attractors.iter().map(|p| [p[0], p[1], p[2], 1.0]).collect(),
            last_pull: vec![[0; 4]; nodes.len()],
            nodes,
            info,
            edges: Vec::new(),
        }
    }

    /// A colony growing from `roots` (grown, mass 1) rather than from
    /// seeds at attractions: a tree from its trunk's top.
    pub fn from_roots(attractors: &[[f32; 3]], roots: &[[f32; 3]]) -> Self {
        Self {
            attractors: attractors.iter().map(|p| [p[0], p[1], p[2], 1.0]).collect(),
            last_pull: vec![[0; 4]; roots.len()],
            nodes: roots.iter().map(|p| [p[0], p[1], p[2], 1.0]).collect(),
            info: (0..roots.len())
                .map(|_| NodeInfo {
                    offset: 0,
                    mass: 1.0,
                    parent: -1,
                    tag: 0,
                })
                .collect(),
            edges: Vec::new(),
        }
    }

    /// One iteration: search with removal, attract, connect, grow.
    pub fn step(&mut self, params: &StepParams) {
        let count = self.nodes.len();
        let mut sums = vec![([0i32; 3], 0u32); count];
        let mut pulled_by = vec![u32::MAX; count];
        let influence2 = params.influence * params.influence;
        let kill2 = params.kill * params.kill;
        for (index, attractor) in self
            .attractors
            .iter_mut()
            .enumerate()
            .filter(|(_, a)| a[3] != 0.0)
        {
            let mut best: Option<(usize, f32)> = None;
            for (j, node) in self.nodes.iter().enumerate() {
                let d = [
                    node[0] - attractor[0],
                    node[1] - attractor[1],
                    node[2] - attractor[2],
                ];
                let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if d2 < best.map_or(influence2, |(_, b)| b) {
                    best = Some((j, d2));
                }
            }
            let Some((j, d2)) = best else {
                continue;
            };
            if d2 < kill2 {
                attractor[3] = 0.0;
                continue;
            }
            let node = self.nodes[j];
            let v = [
                attractor[0] - node[0],
                attractor[1] - node[1],
                attractor[2] - node[2],
            ];
            let length = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            for (sum, component) in sums[j].0.iter_mut().zip(v) {
                *sum += (component / length * FIXED).round_ties_even() as i32;
            }
            sums[j].1 += 1;
            pulled_by[j] = pulled_by[j].min(index as u32);
        }
        let mut slot = count;
        for (i, (sum, hits)) in sums.iter().enumerate() {
            let s = sum.map(|c| c as f32 / FIXED);
            let length2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
            let node = self.nodes[i];
            let pull = [sum[0], sum[1], sum[2], *hits as i32];
            if *hits == 0 || node[3] < 1.0 || length2 <= 1e-12 || pull == self.last_pull[i] {
                continue;
            }
            // A stuck node (pulled as when it last grew) makes no new child.
            self.last_pull[i] = pull;
            if slot >= params.capacity as usize {
                continue;
            }
            let length = length2.sqrt();
            let position = [0, 1, 2].map(|a| node[a] + s[a] / length * params.growth);
            let t = random01(params.seed, slot as u32);
            self.nodes
                .push([position[0], position[1], position[2], 0.0]);
            self.info.push(NodeInfo {
                offset: self.info[i].offset + 1,
                mass: params.mass_min + (params.mass_max - params.mass_min) * t,
                parent: i as i32,
                tag: pulled_by[i],
            });
            self.edges.push([i as u32, slot as u32]);
            self.last_pull.push([0; 4]);
            slot += 1;
        }
        for (node, info) in self.nodes.iter_mut().zip(&self.info) {
            node[3] = (node[3] + params.grow_step * info.mass).min(1.0);
        }
    }

    /// Sum of edge lengths.
    pub fn branch_length(&self) -> f64 {
        branch_length(&self.nodes, &self.edges)
    }
}

/// Sum of the lengths of `edges` between `nodes`.
pub fn branch_length(nodes: &[[f32; 4]], edges: &[[u32; 2]]) -> f64 {
    edges
        .iter()
        .map(|[a, b]| {
            let (p, q) = (nodes[*a as usize], nodes[*b as usize]);
            let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
            f64::from(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
        })
        .sum()
}
