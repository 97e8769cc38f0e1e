// Lean ns-3 counterpart of txop's criterion group `dcf_11a_54M_1500B`
// (crates/txop-sim/benches/saturated.rs): 802.11a at 54 Mbit/s, legacy DCF (no QoS),
// no channel errors, n stations each with one saturated uplink flow of 1500-byte
// payloads to the AP, kept 4 packets deep (a packet is handed to the station's MAC
// each time one of its data MPDUs is acknowledged or dropped, as txop's saturated
// source refills its cell), for one simulated second.
//
// Nothing but the simulation and a throughput counter: no pcap, no ASCII traces, no
// trace files, no log component enabled, no FlowMonitor; every queue is ns-3's bounded
// default (WifiMacQueue 500 packets). Frames go straight to WifiNetDevice::Send, which
// adds LLC/SNAP (as a packet socket would send them, without the socket), so an MPDU
// carries the same bytes as txop's: 1500 + LLC/SNAP 8 + MAC header 24 + FCS 4.
//
// txop's stations are associated from t = 0 and its AP sends no beacons. Here the AP
// sends no beacons either, and the stations associate by active probing first; the
// saturated sources start when the last station is associated, and the simulation stops
// one simulated second later. The wall time reported as `wall_s` is the time txop's
// benchmark iteration has a counterpart for: building the simulation, plus the one
// simulated second of traffic, plus Simulator::Destroy. The association phase before
// the traffic is left out (it is printed apart as `warmup_wall_s`), and so is the
// process start (loading the ns-3 libraries), as txop's figure leaves out its own.
//
// Usage: dcf --n=5 [--seconds=1] [--seed=1]
// Prints one line: `ns3 group=dcf_11a_54M_1500B n=5 sim_s=1 wall_s=… warmup_wall_s=…
// total_wall_s=… throughput_mbps=… delivered=…`.

#include "ns3/core-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace ns3;

namespace
{

using Clock = std::chrono::steady_clock;

constexpr uint32_t PAYLOAD_BYTES = 1500;
/// Packets each station keeps inside the cell (txop's bench: `depth` 4).
constexpr uint32_t DEPTH_PACKETS = 4;
/// Ethertype of the benchmark's frames (IEEE local experimental).
constexpr uint16_t PROTOCOL = 0x88B5;

double
SecondsBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

/// A station's saturated uplink: DEPTH_PACKETS frames at the start, then one more for
/// every data MPDU of its own that leaves the MAC (acknowledged or dropped).
class SaturatedSource
{
  public:
    SaturatedSource(Ptr<WifiNetDevice> dev, Address ap)
        : m_dev(dev),
          m_ap(ap)
    {
    }

    void Start()
    {
        for (uint32_t i = 0; i < DEPTH_PACKETS; ++i)
        {
            Send();
        }
    }

    void Connect()
    {
        m_dev->GetMac()->TraceConnectWithoutContext(
            "AckedMpdu",
            MakeCallback(&SaturatedSource::Acked, this));
        m_dev->GetMac()->TraceConnectWithoutContext(
            "DroppedMpdu",
            MakeCallback(&SaturatedSource::Dropped, this));
    }

  private:
    void Send()
    {
        m_dev->Send(Create<Packet>(PAYLOAD_BYTES), m_ap, PROTOCOL);
    }

    void Refill(Ptr<const WifiMpdu> mpdu)
    {
        if (m_started && mpdu->GetHeader().IsData())
        {
            // Outside the MAC's own call stack, at the same instant.
            Simulator::ScheduleNow(&SaturatedSource::Send, this);
        }
    }

    void Acked(Ptr<const WifiMpdu> mpdu)
    {
        Refill(mpdu);
    }

    void Dropped(WifiMacDropReason, Ptr<const WifiMpdu> mpdu)
    {
        Refill(mpdu);
    }

    Ptr<WifiNetDevice> m_dev;
    Address m_ap;

  public:
    bool m_started{false};
};

struct Run
{
    uint32_t stations{5};
    double seconds{1.0};
    uint32_t associated{0};
    uint64_t deliveredPackets{0};
    uint64_t deliveredBytes{0};
    bool counting{false};
    Clock::time_point trafficStart{};
    std::vector<SaturatedSource*> sources;

    void Associated(Mac48Address)
    {
        if (++associated == stations)
        {
            Simulator::ScheduleNow(&Run::StartTraffic, this);
        }
    }

    /// Stops a run whose stations never all associated (main reports it).
    void StopIfIdle()
    {
        if (!counting)
        {
            Simulator::Stop();
        }
    }

    void StartTraffic()
    {
        trafficStart = Clock::now();
        counting = true;
        for (auto* s : sources)
        {
            s->m_started = true;
            s->Start();
        }
        Simulator::Stop(Seconds(seconds));
    }

    bool Received(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address&, const Address&,
                  NetDevice::PacketType)
    {
        if (counting)
        {
            ++deliveredPackets;
            deliveredBytes += p->GetSize();
        }
        return true;
    }
};

} // namespace

int
main(int argc, char* argv[])
{
    Run run;
    uint32_t seed = 1;
    CommandLine cmd(__FILE__);
    cmd.AddValue("n", "stations", run.stations);
    cmd.AddValue("seconds", "simulated seconds of saturated traffic", run.seconds);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.Parse(argc, argv);
    if (run.stations == 0 || run.seconds <= 0)
    {
        std::fprintf(stderr, "dcf: --n must be at least 1 and --seconds positive\n");
        return 2;
    }

    const auto t0 = Clock::now();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    NodeContainer ap;
    ap.Create(1);
    NodeContainer stas;
    stas.Create(run.stations);

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211a);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("OfdmRate54Mbps"),
                                 "ControlMode",
                                 StringValue("OfdmRate24Mbps"));
    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());

    WifiMacHelper mac;
    Ssid ssid("bench");
    mac.SetType("ns3::ApWifiMac",
                "Ssid",
                SsidValue(ssid),
                "QosSupported",
                BooleanValue(false),
                "BeaconGeneration",
                BooleanValue(false));
    NetDeviceContainer apDev = wifi.Install(phy, mac, ap);
    mac.SetType("ns3::StaWifiMac",
                "Ssid",
                SsidValue(ssid),
                "QosSupported",
                BooleanValue(false),
                "ActiveProbing",
                BooleanValue(true),
                "MaxMissedBeacons",
                UintegerValue(std::numeric_limits<uint32_t>::max()));
    NetDeviceContainer staDevs = wifi.Install(phy, mac, stas);
    wifi.AssignStreams(apDev, 0);
    wifi.AssignStreams(staDevs, 100);

    // The AP and every station within a metre of it: no channel errors.
    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    for (uint32_t i = 0; i < run.stations; ++i)
    {
        double a = 2 * M_PI * i / run.stations;
        pos->Add(Vector(std::cos(a), std::sin(a), 0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(ap);
    mobility.Install(stas);

    Ptr<NetDevice> apNetDev = apDev.Get(0);
    ap.Get(0)->RegisterProtocolHandler(MakeCallback(&Run::Received, &run), PROTOCOL, apNetDev);
    for (uint32_t i = 0; i < run.stations; ++i)
    {
        auto dev = DynamicCast<WifiNetDevice>(staDevs.Get(i));
        auto* src = new SaturatedSource(dev, apNetDev->GetAddress());
        src->Connect();
        run.sources.push_back(src);
        dev->GetMac()->TraceConnectWithoutContext("Assoc", MakeCallback(&Run::Associated, &run));
    }

    // Guard: association is over long before this (it takes milliseconds).
    Simulator::Schedule(Seconds(5), &Run::StopIfIdle, &run);
    const auto runStart = Clock::now();
    Simulator::Run();
    if (!run.counting)
    {
        std::fprintf(stderr,
                     "dcf: only %u of %u stations associated within 5 simulated seconds\n",
                     run.associated,
                     run.stations);
        return 1;
    }
    Simulator::Destroy();
    const auto t1 = Clock::now();
    for (auto* s : run.sources)
    {
        delete s;
    }

    const double warmup = SecondsBetween(runStart, run.trafficStart);
    const double wall = SecondsBetween(t0, runStart) + SecondsBetween(run.trafficStart, t1);
    std::printf("ns3 group=dcf_11a_54M_1500B n=%u sim_s=%g wall_s=%.6f warmup_wall_s=%.6f "
                "total_wall_s=%.6f throughput_mbps=%.3f delivered=%llu\n",
                run.stations,
                run.seconds,
                wall,
                warmup,
                SecondsBetween(t0, t1),
                run.deliveredBytes * 8.0 / run.seconds / 1e6,
                static_cast<unsigned long long>(run.deliveredPackets));
    return 0;
}
