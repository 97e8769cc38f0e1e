// ns-3 reference for txop's hidden-terminal check (issue 15): two saturated stations
// that hear the AP but not each other, uploading to it, with basic access or RTS/CTS.
// It gives the collision probability and throughput txop's neighbours model is set
// against (within 10 %); it is not a speed benchmark, though it times itself like the
// other programs here.
//
// Topology: the AP at (0, 0), station A at (−d, 0), station B at (+d, 0) (d = 10 m;
// positions only set the propagation delay, 33 ns per 10 m). Path loss comes from a
// MatrixPropagationLossModel: AP↔A and AP↔B 72 dB, so with 20 dBm of transmit power each
// station and the AP receive each other at −52 dBm, 30 dB above the −82 dBm preamble
// detection / CCA threshold (SNR 42 dB over ns-3's −94 dBm noise floor: −174 dBm/Hz,
// 20 MHz, noise figure 7 dB); A↔B 140 dB, so A and B receive each other at −120 dBm,
// 38 dB below −82 dBm, 58 dB below the −62 dBm energy-detection threshold and 26 dB below
// the noise floor: neither defers to the other, and neither's frames disturb the other's
// reception of the AP's ACKs and CTSs.
//
// MAC and PHY: 802.11a at 54 Mbit/s, ConstantRateWifiManager, legacy DCF (no QoS: DIFS
// 34 µs, CWmin 15, CWmax 1023, slot 9 µs, SIFS 16 µs), as dcf.cc. Control frames as
// dcf.cc and txop's control-response rule (802.11-2016 10.6.6.5, basic rates 6, 12,
// 24 Mbit/s): RTS at ControlMode 24 Mbit/s, CTS and ACK at 24 Mbit/s (ns-3 answers at
// the highest basic rate ≤ the eliciting frame's; --controlMbps=6 puts the RTS, and so
// the CTS, at 6 Mbit/s; the ACK of a 54 Mbit/s frame stays at 24). No channel errors
// beyond collisions (TableBasedErrorRateModel at 42 dB SNR). Each station keeps 4 MSDUs
// of 1500 bytes (an IP packet of 1500 bytes: txop's `packet_bytes`) queued to the AP,
// refilled as each is acknowledged or dropped, as dcf.cc and txop's saturated source do;
// MPDU 1536 bytes (LLC/SNAP 8, MAC header 24, FCS 4), 248 µs on the air. RTS/CTS
// (--rts=1) protects every data frame (RtsCtsThreshold 500 bytes, so management frames
// of the warm-up go without).
//
// ns-3 3.37 settings that decide the outcome, and what txop's model must match:
// - Frame capture: ns-3 3.37 installs NO frame capture model by default (WifiPhy's
//   FrameCaptureModel is null; SimpleFrameCaptureModel, 5 dB margin within 16 µs, is
//   opt-in). None is enabled here: a PHY locked on a frame drops every later preamble
//   until that frame ends. A and B reach the AP at the same power, so a capture rule
//   that needs a stronger second frame would not change anything here.
// - Preamble detection: ThresholdPreambleDetectionModel, which WifiPhyHelper installs
//   by default: a preamble is detected when its RSSI ≥ −82 dBm and its SNR (SINR over
//   the 4 µs detection window) ≥ 4 dB. Kept (txop: preamble detection at −82 dBm).
// - CCA: CcaSensitivity −82 dBm (a detected Wi-Fi signal), CcaEdThreshold −62 dBm (any
//   energy), RxSensitivity −101 dBm (weaker signals count as interference only):
//   ns-3's defaults, kept.
// - EIFS: ns-3 waits SIFS + 44 µs (the ACK at 6 Mbit/s) + DIFS = 94 µs instead of DIFS
//   after a frame it locked on but received with errors; kept (txop: the same EIFS).
//   Here only the AP ever receives errored frames, and it only answers after SIFS, so
//   EIFS plays no part.
// - ACK timeout: data end + SIFS + slot + 20 µs (the ACK's preamble and SIGNAL,
//   aRxPHYStartDelay) = 45 µs, after which the station defers DIFS (not EIFS) and draws
//   a new backoff from its doubled window; the CTS timeout likewise after the RTS.
//   A PHY-RXSTART before the timeout keeps the station waiting for that frame. Kept
//   (txop: the same response timeout, then AIFS).
// - NAV: set from the Duration of every frame a node decodes (A and B decode the AP's
//   CTSs and ACKs). ns-3's own.
// - Retry limits: an MPDU is dropped after 7 failed attempts, counting a missed CTS and
//   a missed ACK alike (txop's `retry_limit` 7, one counter per MPDU). Stock ns-3 3.37
//   has MaxSsrc 7 and MaxSlrc 4, and it counts a missed CTS against the short retry
//   count but decides the retransmission of an RTS-protected frame on the long one, so
//   it retries an RTS indefinitely with CW held at CWmax (2 s test runs saw 7 missed
//   CTSs in a row 3 to 7 times per station). The stations here use
//   RetryLimitWifiManager below: ConstantRateWifiManager with that one counter, MaxSsrc
//   and MaxSlrc 7. Data rates and control rates are ConstantRateWifiManager's.
// - Beacons off, association by active probing in a warm-up before the traffic (as
//   dcf.cc; txop's stations are associated from the start). No IP/UDP stack and no ARP:
//   MSDUs go straight to WifiNetDevice::Send, which adds LLC/SNAP, so the frames on the
//   air are those of a saturated UDP source whose IP packets are 1500 bytes.
//
// Counters (per station, over the N seconds of traffic): `data_attempts` data frames the
// PHY started sending, `data_failed` those whose ACK did not come (ACK timeout);
// `rts_attempts` and `rts_failed` likewise for RTS and CTS; `collision_p` = failed
// exchanges / started exchanges, where an exchange starts with the RTS under RTS/CTS and
// with the data frame otherwise ((rts_failed + data_failed) / rts_attempts, or
// data_failed / data_attempts); `dropped` MPDUs dropped at the retry limit;
// `throughput_mbps` MSDU bytes delivered to the AP per second (as txop's payload
// throughput).
//
// Usage: hidden [--rts=0|1] [--seconds=10] [--seed=1] [--d=10] [--controlMbps=24]
//               [--abLossDb=140]   (--abLossDb=72: the same cell with A and B in range)
// Prints one line per station and one for the run:
//   `ns3-hidden-sta rts=0 seed=1 station=A throughput_mbps=… data_attempts=…
//    data_failed=… rts_attempts=… rts_failed=… dropped=… collision_p=…`
//   `ns3 group=hidden rts=0 seed=1 sim_s=10 wall_s=… warmup_wall_s=… total_wall_s=…
//    throughput_mbps=… data_attempts=… data_failed=… rts_attempts=… rts_failed=…
//    collision_p=…` (totals over both stations).

#include "ns3/core-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cstdio>
#include <limits>
#include <map>

using namespace ns3;

namespace
{

using Clock = std::chrono::steady_clock;

constexpr uint32_t PAYLOAD_BYTES = 1500;
/// Packets each station keeps queued (txop's saturated `depth` 4 without aggregation).
constexpr uint32_t DEPTH_PACKETS = 4;
/// Ethertype of the benchmark's frames (IEEE local experimental).
constexpr uint16_t PROTOCOL = 0x88B5;
constexpr double TX_POWER_DBM = 20.0;
/// AP↔station loss: 20 dBm − 72 dB = −52 dBm, 30 dB above −82 dBm.
constexpr double LINK_LOSS_DB = 72.0;
/// A↔B loss by default: 20 dBm − 140 dB = −120 dBm.
constexpr double HIDDEN_LOSS_DB = 140.0;
/// txop's retry limit (attempts per MPDU).
constexpr uint32_t RETRY_LIMIT = 7;
/// RTS/CTS threshold (bytes) with --rts=1: every 1536-byte data MPDU is protected.
constexpr uint32_t RTS_THRESHOLD_BYTES = 500;

double
SecondsBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

/// ConstantRateWifiManager whose stations drop an MPDU after RETRY_LIMIT failed
/// attempts, a missed CTS and a missed ACK counting alike (txop's `retry_limit`), instead
/// of ns-3 3.37's short and long retry counts (see the header comment).
class RetryLimitWifiManager : public ConstantRateWifiManager
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::RetryLimitWifiManager")
                                .SetParent<ConstantRateWifiManager>()
                                .SetGroupName("Wifi")
                                .AddConstructor<RetryLimitWifiManager>();
        return tid;
    }

  private:
    bool DoNeedRetransmission(WifiRemoteStation* station,
                              Ptr<const Packet>,
                              bool normally) override
    {
        return normally && m_failures[station] < RETRY_LIMIT;
    }

    void DoReportRtsFailed(WifiRemoteStation* station) override
    {
        ++m_failures[station];
    }

    void DoReportDataFailed(WifiRemoteStation* station) override
    {
        ++m_failures[station];
    }

    void DoReportRtsOk(WifiRemoteStation*, double, WifiMode, double) override
    {
    }

    void DoReportDataOk(WifiRemoteStation* station,
                        double,
                        WifiMode,
                        double,
                        uint16_t,
                        uint8_t) override
    {
        m_failures[station] = 0;
    }

    void DoReportFinalRtsFailed(WifiRemoteStation* station) override
    {
        m_failures[station] = 0;
    }

    void DoReportFinalDataFailed(WifiRemoteStation* station) override
    {
        m_failures[station] = 0;
    }

    /// Failed attempts of the MPDU in flight to each remote station.
    std::map<WifiRemoteStation*, uint32_t> m_failures;
};

NS_OBJECT_ENSURE_REGISTERED(RetryLimitWifiManager);

/// One station: its saturated uplink (as dcf.cc's SaturatedSource) and its counters.
class Station
{
  public:
    Station(const char* name, Ptr<WifiNetDevice> dev, Address ap)
        : m_name(name),
          m_dev(dev),
          m_ap(ap)
    {
    }

    void Connect()
    {
        Ptr<WifiMac> mac = m_dev->GetMac();
        mac->TraceConnectWithoutContext("AckedMpdu", MakeCallback(&Station::Acked, this));
        mac->TraceConnectWithoutContext("DroppedMpdu", MakeCallback(&Station::Dropped, this));
        m_dev->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin",
                                                   MakeCallback(&Station::TxBegin, this));
        Ptr<WifiRemoteStationManager> rsm = m_dev->GetRemoteStationManager();
        rsm->TraceConnectWithoutContext("MacTxDataFailed",
                                        MakeCallback(&Station::DataFailed, this));
        rsm->TraceConnectWithoutContext("MacTxRtsFailed", MakeCallback(&Station::RtsFailed, this));
    }

    void Start()
    {
        m_started = true;
        for (uint32_t i = 0; i < DEPTH_PACKETS; ++i)
        {
            Send();
        }
    }

    void Stop()
    {
        m_started = false;
    }

    void Print(bool rts, uint32_t seed, double seconds) const
    {
        std::printf("ns3-hidden-sta rts=%d seed=%u station=%s throughput_mbps=%.3f "
                    "data_attempts=%llu data_failed=%llu rts_attempts=%llu rts_failed=%llu "
                    "dropped=%llu collision_p=%.4f\n",
                    rts ? 1 : 0,
                    seed,
                    m_name,
                    m_deliveredBytes * 8.0 / seconds / 1e6,
                    ull(m_dataAttempts),
                    ull(m_dataFailed),
                    ull(m_rtsAttempts),
                    ull(m_rtsFailed),
                    ull(m_dropped),
                    CollisionP(rts));
    }

    double CollisionP(bool rts) const
    {
        const uint64_t started = rts ? m_rtsAttempts : m_dataAttempts;
        return started ? double(m_rtsFailed + m_dataFailed) / double(started) : 0.0;
    }

    static unsigned long long ull(uint64_t v)
    {
        return static_cast<unsigned long long>(v);
    }

    const char* m_name;
    Ptr<WifiNetDevice> m_dev;
    Address m_ap;
    bool m_started{false};
    uint64_t m_deliveredBytes{0};
    uint64_t m_dataAttempts{0};
    uint64_t m_dataFailed{0};
    uint64_t m_rtsAttempts{0};
    uint64_t m_rtsFailed{0};
    uint64_t m_dropped{0};

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
            Simulator::ScheduleNow(&Station::Send, this);
        }
    }

    void Acked(Ptr<const WifiMpdu> mpdu)
    {
        Refill(mpdu);
    }

    void Dropped(WifiMacDropReason, Ptr<const WifiMpdu> mpdu)
    {
        if (m_started && mpdu->GetHeader().IsData())
        {
            ++m_dropped;
        }
        Refill(mpdu);
    }

    void TxBegin(WifiConstPsduMap psdus, WifiTxVector, double)
    {
        if (!m_started)
        {
            return;
        }
        for (const auto& [id, psdu] : psdus)
        {
            const WifiMacHeader& hdr = psdu->GetHeader(0);
            if (hdr.IsData())
            {
                ++m_dataAttempts;
            }
            else if (hdr.IsRts())
            {
                ++m_rtsAttempts;
            }
        }
    }

    void DataFailed(Mac48Address)
    {
        if (m_started)
        {
            ++m_dataFailed;
        }
    }

    void RtsFailed(Mac48Address)
    {
        if (m_started)
        {
            ++m_rtsFailed;
        }
    }
};

struct Run
{
    double seconds{10.0};
    uint32_t associated{0};
    bool counting{false};
    Clock::time_point trafficStart{};
    std::vector<Station*> stations;

    void Associated(Mac48Address)
    {
        if (++associated == stations.size())
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
        for (auto* s : stations)
        {
            s->Start();
        }
        Simulator::Schedule(Seconds(seconds), &Run::StopTraffic, this);
        Simulator::Stop(Seconds(seconds));
    }

    void StopTraffic()
    {
        for (auto* s : stations)
        {
            s->Stop();
        }
    }

    bool Received(Ptr<NetDevice>, Ptr<const Packet> p, uint16_t, const Address& from,
                  const Address&, NetDevice::PacketType)
    {
        if (!counting)
        {
            return true;
        }
        for (auto* s : stations)
        {
            if (s->m_dev->GetAddress() == from)
            {
                s->m_deliveredBytes += p->GetSize();
            }
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
    bool rts = false;
    double d = 10.0;
    uint32_t controlMbps = 24;
    double abLossDb = HIDDEN_LOSS_DB;
    CommandLine cmd(__FILE__);
    cmd.AddValue("rts", "1 = RTS/CTS before every data frame, 0 = basic access", rts);
    cmd.AddValue("seconds", "simulated seconds of saturated traffic", run.seconds);
    cmd.AddValue("seed", "RNG run number", seed);
    cmd.AddValue("d", "distance (m) of each station from the AP (propagation delay only)", d);
    cmd.AddValue("controlMbps", "RTS rate: 6, 12 or 24 Mbit/s (CTS follows it)", controlMbps);
    cmd.AddValue("abLossDb", "path loss (dB) between A and B; 72 puts them in range", abLossDb);
    cmd.Parse(argc, argv);
    if (run.seconds <= 0 || d <= 0 || abLossDb < 0 ||
        (controlMbps != 6 && controlMbps != 12 && controlMbps != 24))
    {
        std::fprintf(stderr,
                     "hidden: --seconds and --d must be positive, --abLossDb at least 0, "
                     "--controlMbps 6, 12 or 24\n");
        return 2;
    }

    const auto t0 = Clock::now();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    NodeContainer ap;
    ap.Create(1);
    NodeContainer stas;
    stas.Create(2);

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    pos->Add(Vector(-d, 0, 0));
    pos->Add(Vector(d, 0, 0));
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(ap);
    mobility.Install(stas);

    Ptr<MatrixPropagationLossModel> loss = CreateObject<MatrixPropagationLossModel>();
    loss->SetDefaultLoss(abLossDb);
    Ptr<MobilityModel> apMob = ap.Get(0)->GetObject<MobilityModel>();
    for (uint32_t i = 0; i < 2; ++i)
    {
        loss->SetLoss(apMob, stas.Get(i)->GetObject<MobilityModel>(), LINK_LOSS_DB, true);
    }
    Ptr<YansWifiChannel> channel = CreateObject<YansWifiChannel>();
    channel->SetPropagationLossModel(loss);
    channel->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211a);
    char controlMode[32];
    std::snprintf(controlMode, sizeof controlMode, "OfdmRate%uMbps", controlMbps);
    wifi.SetRemoteStationManager("ns3::RetryLimitWifiManager",
                                 "DataMode",
                                 StringValue("OfdmRate54Mbps"),
                                 "ControlMode",
                                 StringValue(controlMode),
                                 "RtsCtsThreshold",
                                 UintegerValue(rts ? RTS_THRESHOLD_BYTES : 65535),
                                 "MaxSsrc",
                                 UintegerValue(RETRY_LIMIT),
                                 "MaxSlrc",
                                 UintegerValue(RETRY_LIMIT));
    YansWifiPhyHelper phy;
    phy.SetChannel(channel);
    phy.Set("TxPowerStart", DoubleValue(TX_POWER_DBM));
    phy.Set("TxPowerEnd", DoubleValue(TX_POWER_DBM));

    WifiMacHelper mac;
    Ssid ssid("hidden");
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

    Ptr<NetDevice> apNetDev = apDev.Get(0);
    ap.Get(0)->RegisterProtocolHandler(MakeCallback(&Run::Received, &run), PROTOCOL, apNetDev);
    const char* names[2] = {"A", "B"};
    for (uint32_t i = 0; i < 2; ++i)
    {
        auto dev = DynamicCast<WifiNetDevice>(staDevs.Get(i));
        auto* s = new Station(names[i], dev, apNetDev->GetAddress());
        s->Connect();
        run.stations.push_back(s);
        dev->GetMac()->TraceConnectWithoutContext("Assoc", MakeCallback(&Run::Associated, &run));
    }

    // Guard: association is over long before this (it takes milliseconds).
    Simulator::Schedule(Seconds(5), &Run::StopIfIdle, &run);
    const auto runStart = Clock::now();
    Simulator::Run();
    if (!run.counting)
    {
        std::fprintf(stderr,
                     "hidden: only %u of 2 stations associated within 5 simulated seconds\n",
                     run.associated);
        return 1;
    }
    Simulator::Destroy();
    const auto t1 = Clock::now();

    uint64_t bytes = 0, dataAttempts = 0, dataFailed = 0, rtsAttempts = 0, rtsFailed = 0;
    for (auto* s : run.stations)
    {
        s->Print(rts, seed, run.seconds);
        bytes += s->m_deliveredBytes;
        dataAttempts += s->m_dataAttempts;
        dataFailed += s->m_dataFailed;
        rtsAttempts += s->m_rtsAttempts;
        rtsFailed += s->m_rtsFailed;
    }
    const uint64_t started = rts ? rtsAttempts : dataAttempts;
    const double warmup = SecondsBetween(runStart, run.trafficStart);
    const double wall = SecondsBetween(t0, runStart) + SecondsBetween(run.trafficStart, t1);
    std::printf("ns3 group=hidden rts=%d seed=%u sim_s=%g wall_s=%.6f warmup_wall_s=%.6f "
                "total_wall_s=%.6f throughput_mbps=%.3f data_attempts=%llu data_failed=%llu "
                "rts_attempts=%llu rts_failed=%llu collision_p=%.4f\n",
                rts ? 1 : 0,
                seed,
                run.seconds,
                wall,
                warmup,
                SecondsBetween(t0, t1),
                bytes * 8.0 / run.seconds / 1e6,
                Station::ull(dataAttempts),
                Station::ull(dataFailed),
                Station::ull(rtsAttempts),
                Station::ull(rtsFailed),
                started ? double(rtsFailed + dataFailed) / double(started) : 0.0);
    for (auto* s : run.stations)
    {
        delete s;
    }
    return 0;
}
