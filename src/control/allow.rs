//! `--osc-allow CIDR`: the networks whose hosts may send OSC and query
//! OSCQuery. Empty means everyone, as before; on a shared venue network a
//! performer lists their own subnet or machines.

use std::net::IpAddr;
use std::str::FromStr;

/// One network, `192.168.1.0/24`, `10.0.0.7` (one host) or `fd00::/8`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl FromStr for Network {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (address, prefix) = text.split_once('/').unwrap_or((text, ""));
        let address: IpAddr = address
            .trim()
            .parse()
            .map_err(|_| format!("{text:?} is not an address or CIDR network"))?;
        let bits = if address.is_ipv4() { 32 } else { 128 };
        let prefix = if prefix.is_empty() {
            bits
        } else {
            prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits)
                .ok_or_else(|| format!("{text:?}: the prefix must be 0 to {bits}"))?
        };
        Ok(Self { address, prefix })
    }
}

impl Network {
    /// Whether `ip` lies in this network (IPv4 peers that arrive as
    /// IPv4-mapped IPv6 addresses count as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.address, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => prefix_equal(
                u128::from(u32::from(net)),
                u128::from(u32::from(ip)),
                32,
                self.prefix,
            ),
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_equal(u128::from(net), u128::from(ip), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_equal(a: u128, b: u128, bits: u8, prefix: u8) -> bool {
    let shift = u32::from(bits - prefix);
    shift >= u32::from(bits) || (a >> shift) == (b >> shift)
}

/// The networks allowed; empty allows every host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(Vec<Network>);

impl AllowList {
    /// A list of these networks.
    pub fn new(networks: Vec<Network>) -> Self {
        Self(networks)
    }

    /// Whether `ip` may talk to the show.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.0.is_empty() || self.0.iter().any(|n| n.contains(ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("test address")
    }

    #[test]
    fn networks_contain_their_hosts_only() {
        let lan: Network = "192.168.1.0/24".parse().expect("cidr");
        assert!(lan.contains(ip("192.168.1.77")));
        assert!(!lan.contains(ip("192.168.2.1")));
        assert!(lan.contains(ip("::ffff:192.168.1.3")));
        let host: Network = "10.0.0.7".parse().expect("host");
        assert!(host.contains(ip("10.0.0.7")) && !host.contains(ip("10.0.0.8")));
        let all: Network = "0.0.0.0/0".parse().expect("all");
        assert!(all.contains(ip("8.8.8.8")));
        let v6: Network = "fd00::/8".parse().expect("v6");
        assert!(v6.contains(ip("fd12::1")) && !v6.contains(ip("fe80::1")));
        assert!("10.0.0.0/33".parse::<Network>().is_err());
        assert!("nonsense".parse::<Network>().is_err());
    }

    #[test]
    fn an_empty_list_allows_everyone() {
        assert!(AllowList::default().allows(ip("1.2.3.4")));
        let list = AllowList::new(vec!["127.0.0.0/8".parse().expect("cidr")]);
        assert!(list.allows(ip("127.0.0.1")) && !list.allows(ip("1.2.3.4")));
    }
}
