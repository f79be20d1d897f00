//! Where the phone page can be opened: the addresses a person types into
//! a phone on the show's network, worked out once when the OSCQuery
//! server starts (from the addresses the operating system reports for
//! its interfaces) and logged, so nobody has to look up the machine's
//! address by hand.

use std::net::IpAddr;

/// The phone page's URLs on `port` for a server bound to `bind`, given
/// the machine's interface addresses: each non-loopback address the
/// server is reachable on, then `localhost` where the server answers on
/// loopback. IPv6 link-local addresses are left out: a browser needs the
/// interface's zone to reach them, and the same machine has a routable
/// address or an IPv4 one beside them.
pub fn phone_page_urls(bind: &str, port: u16, interfaces: &[IpAddr]) -> Vec<String> {
    let url = |host: &str| format!("http://{host}:{port}/ui");
    let Ok(bind) = bind.parse::<IpAddr>() else {
        // A host name: the person who gave it knows where it points.
        return vec![url(bind)];
    };
    if !bind.is_unspecified() {
        return vec![url(&if bind.is_loopback() {
            "localhost".to_string()
        } else {
            host(bind)
        })];
    }
    // A socket on `::` also takes IPv4 where the system makes it dual
    // stack (Linux, macOS), not on Windows (IPV6_V6ONLY by default).
    let takes = |address: &IpAddr| match (bind, address) {
        (IpAddr::V4(_), IpAddr::V4(_)) => true,
        (IpAddr::V6(_), IpAddr::V6(v6)) => !is_link_local(v6),
        (IpAddr::V6(_), IpAddr::V4(_)) => cfg!(not(windows)),
        (IpAddr::V4(_), IpAddr::V6(_)) => false,
    };
    let mut reachable: Vec<IpAddr> = interfaces
        .iter()
        .filter(|a| !a.is_loopback() && !a.is_unspecified() && takes(a))
        .copied()
        .collect();
    // IPv4 first: the shorter address to type on a phone.
    reachable.sort_by_key(|a| (a.is_ipv6(), *a));
    reachable.dedup();
    reachable
        .into_iter()
        .map(|a| url(&host(a)))
        .chain([url("localhost")])
        .collect()
}

/// The machine's interface addresses as the operating system reports
/// them; none if it cannot say (the log then shows `localhost` only).
pub fn interface_addresses() -> Vec<IpAddr> {
    match if_addrs::get_if_addrs() {
        Ok(interfaces) => interfaces.into_iter().map(|i| i.ip()).collect(),
        Err(error) => {
            tracing::debug!("cannot list the network interfaces: {error}");
            Vec::new()
        }
    }
}

/// An address as a URL's host: IPv6 in brackets.
fn host(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// `fe80::/10`, reachable only with the interface named.
fn is_link_local(address: &std::net::Ipv6Addr) -> bool {
    address.segments()[0] & 0xffc0 == 0xfe80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addresses(list: &[&str]) -> Vec<IpAddr> {
        list.iter().filter_map(|a| a.parse().ok()).collect()
    }

    #[test]
    fn every_address_the_server_answers_on_and_localhost() {
        let interfaces = addresses(&[
            "127.0.0.1",
            "::1",
            "192.168.1.20",
            "10.0.0.7",
            "fe80::1",
            "2001:db8::5",
        ]);
        assert_eq!(
            phone_page_urls("0.0.0.0", 9001, &interfaces),
            [
                "http://10.0.0.7:9001/ui",
                "http://192.168.1.20:9001/ui",
                "http://localhost:9001/ui",
            ]
        );
        let both = phone_page_urls("::", 9001, &interfaces);
        assert!(both.contains(&"http://[2001:db8::5]:9001/ui".to_string()));
        assert!(!both.iter().any(|u| u.contains("fe80")), "{both:?}");
        assert!(!both.iter().any(|u| u.contains("HOST")), "{both:?}");
        assert_eq!(
            both.last().map(String::as_str),
            Some("http://localhost:9001/ui")
        );
    }

    #[test]
    fn a_server_bound_to_one_address_is_reached_there_only() {
        let interfaces = addresses(&["192.168.1.20", "10.0.0.7"]);
        assert_eq!(
            phone_page_urls("10.0.0.7", 80, &interfaces),
            ["http://10.0.0.7:80/ui"]
        );
        assert_eq!(
            phone_page_urls("127.0.0.1", 9001, &interfaces),
            ["http://localhost:9001/ui"]
        );
        assert_eq!(
            phone_page_urls("show.local", 9001, &interfaces),
            ["http://show.local:9001/ui"]
        );
        // No interface reported: localhost still works on this machine.
        assert_eq!(
            phone_page_urls("0.0.0.0", 9001, &[]),
            ["http://localhost:9001/ui"]
        );
    }
}
