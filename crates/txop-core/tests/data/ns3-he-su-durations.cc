// Prints ns-3 3.37's HE SU / ER SU PPDU durations (ns), one line per vector and size;
// ns3-he-su-durations.txt holds them grouped by vector (txop-core's phy/he.rs tests).
// Build against Debian's libns3-dev 3.37:
//   g++ -std=c++17 ns3-he-su-durations.cc -o he -lns3-wifi -lns3-core -lns3-network
#include "ns3/he-phy.h"
#include "ns3/wifi-phy.h"
#include "ns3/wifi-tx-vector.h"
#include <cstdio>
using namespace ns3;
int main() {
  const uint32_t sizes[] = {1, 14, 32, 100, 1000, 1536, 1538, 3000, 7935, 65535};
  const uint16_t widths[] = {20, 40, 80, 160};
  const uint16_t gis[] = {800, 1600, 3200};
  for (uint8_t mcs = 0; mcs <= 11; mcs++)
    for (uint8_t nss = 1; nss <= 4; nss++)
      for (uint16_t w : widths)
        for (uint16_t gi : gis)
          for (uint32_t s : sizes) {
            WifiTxVector v(HePhy::GetHeMcs(mcs), 0, WIFI_PREAMBLE_HE_SU, gi, nss, nss, 0, w, false);
            Time t = WifiPhy::CalculateTxDuration(s, v, WIFI_PHY_BAND_5GHZ);
            printf("su %u %u %u %u %u %lld\n", mcs, nss, w, gi, s, (long long)t.GetNanoSeconds());
          }
  for (uint8_t mcs = 0; mcs <= 2; mcs++)
    for (uint16_t gi : gis)
      for (uint32_t s : sizes) {
        WifiTxVector v(HePhy::GetHeMcs(mcs), 0, WIFI_PREAMBLE_HE_ER_SU, gi, 1, 1, 0, 20, false);
        Time t = WifiPhy::CalculateTxDuration(s, v, WIFI_PHY_BAND_5GHZ);
        printf("er %u 1 20 %u %u %lld\n", mcs, gi, s, (long long)t.GetNanoSeconds());
      }
  return 0;
}
