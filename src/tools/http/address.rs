//! Which hosts and addresses count as private: loopback, private ranges, link-local,
//! unspecified, shared (CGNAT), multicast and reserved ranges, in every form an IPv6 address
//! can carry an IPv4 one.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Host;

/// Why a URL host is not a public internet host, or `None` when it is one (as far as the
/// text shows: names are checked again once resolved).
pub fn private_host_reason(host: &Host<&str>) -> Option<String> {
    match host {
        Host::Domain(domain) => {
            let name = domain.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") {
                Some(format!("{domain} names this machine"))
            } else {
                None
            }
        }
        Host::Ipv4(ip) => ipv4_reason(*ip).map(|r| format!("{ip} is {r}")),
        Host::Ipv6(ip) => ipv6_reason(*ip).map(|r| format!("{ip} is {r}")),
    }
}

/// True for any address a request must not reach while private networks are blocked.
pub fn is_forbidden_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => ipv4_reason(v4).is_some(),
        IpAddr::V6(v6) => ipv6_reason(v6).is_some(),
    }
}

fn ipv4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address (cloud metadata lives here)")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if a == 198 && (b == 18 || b == 19) {
        Some("a benchmarking address")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("a multicast, broadcast or reserved address")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("an IETF protocol address")
    } else {
        None
    }
}

fn ipv6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_ipv4(ip) {
        return ipv4_reason(v4);
    }
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique local (private) address")
    } else if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 {
        Some("a link-local or site-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else {
        None
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`)
/// or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mapped = s[..5].iter().all(|&x| x == 0) && s[5] == 0xffff;
    let compatible = s[..6].iter().all(|&x| x == 0) && !(s[6] == 0 && s[7] <= 1);
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0);
    (mapped || compatible || nat64).then_some(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(text: &str) -> bool {
        is_forbidden_ip(text.parse().expect("an IP address"))
    }

    #[test]
    fn private_and_special_addresses_are_blocked() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(blocked(ip), "{ip} should be blocked");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "8.8.8.8",
        ] {
            assert!(!blocked(ip), "{ip} should pass");
        }
    }
}
