//! Zeroconf (mDNS) advertisement of the OSCQuery server as `_oscjson._tcp`
//! and of the OSC port as `_osc._udp`, so Chataigne, VDMX or a
//! TouchDesigner component find sylva on the network without typing an
//! address. Off unless asked for (`--zeroconf`): mDNS multicasts to the
//! whole local network, which a show machine may not want.

use mdns_sd::{ServiceDaemon, ServiceInfo};

/// The services advertised, kept alive while the show runs.
pub struct Advertisement {
    _daemon: ServiceDaemon,
}

/// The two service records for OSCQuery on `oscquery_port` and OSC on `osc_port`.
pub fn services(
    host: &str,
    oscquery_port: u16,
    osc_port: u16,
) -> Result<Vec<ServiceInfo>, mdns_sd::Error> {
    let hostname = format!("{host}.local.");
    let record = |ty: &str, port: u16| {
        ServiceInfo::new(ty, "sylva", &hostname, "", port, &[("txtvers", "1")][..])
            .map(ServiceInfo::enable_addr_auto)
    };
    Ok(vec![
        record("_oscjson._tcp.local.", oscquery_port)?,
        record("_osc._udp.local.", osc_port)?,
    ])
}

/// Starts advertising; the advertisement ends when the result is dropped.
pub fn advertise(oscquery_port: u16, osc_port: u16) -> Result<Advertisement, mdns_sd::Error> {
    let daemon = ServiceDaemon::new()?;
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "sylva".into());
    for service in services(&host, oscquery_port, osc_port)? {
        daemon.register(service)?;
    }
    tracing::info!(
        "zeroconf: advertising _oscjson._tcp on {oscquery_port} and _osc._udp on {osc_port}"
    );
    Ok(Advertisement { _daemon: daemon })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_records_name_the_services_and_ports() {
        // Only the records are built: registering would multicast.
        let records = services("stage", 9001, 9000).unwrap_or_default();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].get_fullname(), "sylva._oscjson._tcp.local.");
        assert_eq!(records[0].get_port(), 9001);
        assert_eq!(records[1].get_fullname(), "sylva._osc._udp.local.");
        assert_eq!(records[1].get_port(), 9000);
    }
}
