/* test_repr.c - mp_repr against Python 3's repr(): floats, str, bytes, ints, containers, limits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_repr.h"
#include "unit_main.h"

struct float_case {
	uint64_t bits;
	const char *expect;
};

struct text_case {
	const char *text;
	size_t len;
	const char *expect;
};

struct int_case {
	const char *le; /* minimal little-endian two's complement */
	size_t len;
	const char *expect;
};

/* Generated with python3 3.11 (Unicode 14.0.0): repr() of each value. The floats
   include every power of two whose shortest digits are not printf's closest
   %.{p}e rounding (the lopsided rounding interval next to a power of two), plus
   random bit patterns and decimals; the strings cover quoting, the escapes and
   non-printable code points of each kind (controls, format, surrogates, private
   use, unassigned, separators, non-ASCII spaces). A wider run compared 267,866
   values (100,000 random bit patterns, every code point once) with no difference. */
static const struct float_case float_cases[] = {
	{ 0x0000000000000000u, "0.0" },
	{ 0x8000000000000000u, "-0.0" },
	{ 0x7ff0000000000000u, "inf" },
	{ 0xfff0000000000000u, "-inf" },
	{ 0x7ff8000000000000u, "nan" },
	{ 0x3ff0000000000000u, "1.0" },
	{ 0xbff0000000000000u, "-1.0" },
	{ 0x3fb999999999999au, "0.1" },
	{ 0x3fd3333333333334u, "0.30000000000000004" },
	{ 0x4341c37937e08000u, "1e+16" },
	{ 0x4341c37937e07fffu, "9999999999999998.0" },
	{ 0x430c6bf526340000u, "1000000000000000.0" },
	{ 0x437b69b4ba630f35u, "1.2345678901234568e+17" },
	{ 0x3f1a36e2eb1c432du, "0.0001" },
	{ 0x3f202e4b6ce5dc68u, "0.00012345" },
	{ 0x3ee4f8b588e368f1u, "1e-05" },
	{ 0x3eef75104d551d69u, "1.5e-05" },
	{ 0x0000000000000001u, "5e-324" },
	{ 0x0010000000000000u, "2.2250738585072014e-308" },
	{ 0x7fefffffffffffffu, "1.7976931348623157e+308" },
	{ 0x4340000000000000u, "9007199254740992.0" },
	{ 0x4480f0cf064dd592u, "1e+22" },
	{ 0x44b52d02c7e14af6u, "1e+23" },
	{ 0x4004000000000000u, "2.5" },
	{ 0x4059000000000000u, "100.0" },
	{ 0x40934a0000000000u, "1234.5" },
	{ 0x3e7ad7f29abcaf48u, "1e-07" },
	{ 0x400921fb54442d18u, "3.141592653589793" },
	{ 0x43e0000000000000u, "9.223372036854776e+18" },
	{ 0x43f0000000000000u, "1.8446744073709552e+19" },
	{ 0x3fd5555555555555u, "0.3333333333333333" },
	{ 0x3fe5555555555555u, "0.6666666666666666" },
	{ 0x54b249ad2594c37du, "1e+100" },
	{ 0x405edd2f1a9fbe77u, "123.456" },
	{ 0x3fe0000000000000u, "0.5" },
	{ 0x01a56e1fc2f8f359u, "1e-300" },
	{ 0x0060000000000000u, "7.120236347223045e-307" },
	{ 0x0100000000000000u, "7.291122019556398e-304" },
	{ 0x0420000000000000u, "8.209073602596753e-289" },
	{ 0x0660000000000000u, "5.641232424577593e-278" },
	{ 0x0d70000000000000u, "5.858190679279809e-244" },
	{ 0x0e80000000000000u, "7.678447687145631e-239" },
	{ 0x0eb0000000000000u, "6.142758149716505e-238" },
	{ 0x0f50000000000000u, "6.290184345309701e-235" },
	{ 0x13e0000000000000u, "5.940911144672375e-213" },
	{ 0x1480000000000000u, "6.083493012144512e-210" },
	{ 0x1690000000000000u, "5.225680706521042e-200" },
	{ 0x1730000000000000u, "5.351097043477547e-197" },
	{ 0x1da0000000000000u, "5.426657103235053e-166" },
	{ 0x2020000000000000u, "5.966672584960166e-154" },
	{ 0x20f0000000000000u, "4.887898181599368e-150" },
	{ 0x2160000000000000u, "6.256509672447191e-148" },
	{ 0x2800000000000000u, "5.075883674631299e-116" },
	{ 0x2910000000000000u, "6.653062250012736e-111" },
	{ 0x2d70000000000000u, "7.854549544476363e-90" },
	{ 0x3730000000000000u, "7.174648137343064e-43" },
	{ 0x39e0000000000000u, "6.310887241768095e-30" },
	{ 0x3b20000000000000u, "6.617444900424222e-24" },
	{ 0x3d30000000000000u, "5.684341886080802e-14" },
	{ 0x3e70000000000000u, "5.960464477539063e-08" },
	{ 0x4580000000000000u, "6.189700196426902e+26" },
	{ 0x4790000000000000u, "5.316911983139664e+36" },
	{ 0x4830000000000000u, "5.444517870735016e+39" },
	{ 0x4ab0000000000000u, "5.986310706507379e+51" },
	{ 0x4b50000000000000u, "6.129982163463556e+54" },
	{ 0x5120000000000000u, "6.070840288205404e+82" },
	{ 0x5300000000000000u, "6.518515124270356e+91" },
	{ 0x5580000000000000u, "7.167183174968974e+103" },
	{ 0x5790000000000000u, "6.156563468186638e+113" },
	{ 0x58d0000000000000u, "6.455624695217272e+119" },
	{ 0x5940000000000000u, "8.263199609878108e+121" },
	{ 0x5e00000000000000u, "6.243497100631985e+144" },
	{ 0x6150000000000000u, "5.623642243178996e+160" },
	{ 0x61f0000000000000u, "5.758609657015292e+163" },
	{ 0x6290000000000000u, "5.896816288783659e+166" },
	{ 0x63d0000000000000u, "6.183260036827614e+172" },
	{ 0x6510000000000000u, "6.483618076376552e+178" },
	{ 0x6c50000000000000u, "5.386379163185535e+213" },
	{ 0x7220000000000000u, "5.334411546303884e+241" },
	{ 0x75e0000000000000u, "6.150157786156811e+259" },
	{ 0x77f0000000000000u, "5.282945311356653e+269" },
	{ 0x7cf0000000000000u, "6.386688990511104e+293" },
	{ 0xdda1494c73cf256du, "-1.0539756485530688e+143" },
	{ 0xdb5b5fab8f4d3e27u, "-1.2143721666352482e+132" },
	{ 0xc7fde805ec99108du, "-6.360375184993316e+38" },
	{ 0x73ab48767734d7c1u, "1.526087629730313e+249" },
	{ 0xdae445508201e2bdu, "-7.02551513787579e+129" },
	{ 0x309d6b79965eda32u, "1.6260771785726701e-74" },
	{ 0xcdcc69292f45e678u, "-5.984009685093657e+66" },
	{ 0x79cb9e86830c71c2u, "4.8959585264576934e+278" },
	{ 0x9d2c67eda13ffe79u, "-3.7634144828029947e-168" },
	{ 0x2fa91425cb008853u, "4.2301541954837196e-79" },
	{ 0x7253edc618187993u, "5.315422088462547e+242" },
	{ 0x244caf9c4dabb481u, "7.893354548061464e-134" },
	{ 0x89e7d15f17362f25u, "-6.0511296129096725e-261" },
	{ 0xe3eff9c0cf44dd3fu, "-2.471417988383651e+173" },
	{ 0xa26b7f62b1852f27u, "-7.046717376279707e-143" },
	{ 0x986e86cb0ab8ab67u, "-5.352667702512672e-191" },
	{ 0x656abd72fb710734u, "3.467443581611296e+180" },
	{ 0x73f778aaf6fa5db8u, "4.201212419249933e+250" },
	{ 0xbd299753a7677796u, "-4.545896140860994e-14" },
	{ 0xa66b0d389d95847eu, "-1.278808376866442e-123" },
	{ 0x9f8558a628518867u, "-7.773821756658801e-157" },
	{ 0xd4ea65d003d71684u, "-1.1547680013076696e+101" },
	{ 0x102b938b8743feb6u, "8.88116792998917e-231" },
	{ 0x09208a650f3ebdd3u, "1.0259476444142278e-264" },
	{ 0xe12b2b8f30b17d0bu, "-1.1937126864956989e+160" },
	{ 0x998092253deffa38u, "-7.616900394922395e-186" },
	{ 0xc7321cc007b37e14u, "-9.404446511312006e+34" },
	{ 0x5387f61376c468aeu, "2.4990667113411633e+94" },
	{ 0x97491e2370c6a5b8u, "-1.6800925191972358e-196" },
	{ 0x320094ead7a94dedu, "7.688121853400444e-68" },
	{ 0x3bd0334684e55160u, "1.3722183439346506e-20" },
	{ 0x4b4d8474a3ea284du, "5.654411402250841e+54" },
	{ 0x012d0ea67ff12229u, "5.2964948879303666e-303" },
	{ 0x15c1d2dfa9964aefu, "7.106101800028059e-204" },
	{ 0xa7a1149075139237u, "-8.466578551422606e-118" },
	{ 0x6822a6b24735af1cu, "4.254739997646274e+193" },
	{ 0x8d1fe1daff666589u, "-1.82394811931708e-245" },
	{ 0xee82ec3ffee5a5b2u, "-2.1888367315112703e+224" },
	{ 0x154cd2aad7185ddau, "4.48880712297644e-206" },
	{ 0x4105cca7b53302fcu, "178580.96347620327" },
	{ 0xc20ba2c250b601fcu, "-14836845078.750969" },
	{ 0x834c687a3acb6266u, "-8.89603834440535e-293" },
	{ 0x079dd25a49fe85b0u, "5.512596216870721e-272" },
	{ 0x902a174f11fa2ac0u, "-8.402816815872519e-231" },
	{ 0x1ba1192ec42b7170u, "1.3502284154461823e-175" },
	{ 0x1b98fbe466809a11u, "9.864696090544821e-176" },
	{ 0x4a789cb3d8b9b45cu, "5.755304411044234e+50" },
	{ 0x111b8aaa62f28d1au, "2.906520696062733e-226" },
	{ 0x0452ef05f542441du, "7.771400548145935e-288" },
	{ 0xaf5570eed8e94b15u, "-1.1301839483341071e-80" },
	{ 0x36a80bdf0023b682u, "2.1060089631924535e-45" },
	{ 0xed52a24135b00a54u, "-4.111104105007642e+218" },
	{ 0x0d650372e90794dfu, "3.846903957475949e-244" },
	{ 0x601e5b4578511608u, "1.0175362681840425e+155" },
	{ 0xb57a6a1dfaf8cda9u, "-4.4124872996083094e-51" },
	{ 0x6b77730f65bd9acbu, "4.818254424152078e+209" },
	{ 0x90f5380e12b2a414u, "-5.59818787271577e-227" },
	{ 0x32d03fdda123f501u, "6.171919835623171e-64" },
	{ 0xacc6d8f2c74c7ccfu, "-5.476576641333704e-93" },
	{ 0x563e9bed45100358u, "2.8080761486268174e+107" },
	{ 0x4fab6f3e164f1513u, "6.204497722829631e+75" },
	{ 0x03e0d681552454f1u, "5.399361342713712e-290" },
	{ 0x68f918d8f6cdb2f8u, "4.690077642987989e+197" },
	{ 0xec3fbf4dc20ef164u, "-2.671920137368832e+213" },
	{ 0x2274ea181e34b3f1u, "1.0719341509670623e-142" },
	{ 0xb4ff00ae3f1347deu, "-2.0230178791490352e-53" },
	{ 0x02cdf2af19de2bc1u, "3.6633790673883503e-295" },
	{ 0x77064c2c0f552c94u, "2.246794185000636e+265" },
	{ 0x7ca07386cc099a1eu, "2.052132435276533e+292" },
	{ 0xae9ca08b2d7c5048u, "-3.6839941944551377e-84" },
	{ 0x303a07b28f2df760u, "2.2480005775930857e-76" },
	{ 0x82450164728a6fcfu, "-1.0037049327814946e-297" },
	{ 0xfc3b66fa30d0b194u, "-2.6704358063702368e+290" },
	{ 0xc4ff64debb5d6b48u, "-2.372065358411878e+24" },
	{ 0x6b52b08d21870f0bu, "9.60059739237528e+208" },
	{ 0x623d8eb7a4ca83b2u, "1.7021004551247649e+165" },
	{ 0x65151c401dd377bfu, "8.554466782229772e+178" },
	{ 0xfd7410696bb6a3deu, "-2.050291543292753e+296" },
	{ 0x001edc8e367e5d6du, "4.2918260627505524e-308" },
	{ 0xdd44fd3645114889u, "-1.999594777184923e+141" },
	{ 0xf9903b72f88ece64u, "-3.596781218505223e+277" },
	{ 0x97bdd982cdac6046u, "-2.5556541660417015e-194" },
	{ 0xff769e374ddc74c8u, "-9.926826104895675e+305" },
	{ 0x050684bfe286852cu, "1.8929301343429817e-284" },
	{ 0x2ff3600735f11af2u, "1.0457919747758503e-77" },
	{ 0xfeef16e964ef2ebeu, "-2.665013245785095e+303" },
	{ 0x9a1de24edab871d5u, "-7.033015931467466e-183" },
	{ 0x93b3a3d9a44f576au, "-9.115603964113715e-214" },
	{ 0x0ac793f519af685du, "9.814313116910558e-257" },
	{ 0x2577c1ecfd42e044u, "3.427385883019569e-128" },
	{ 0x7108e02236971e1bu, "3.163725663615856e+236" },
	{ 0x027385c9421e7a60u, "7.462803201584231e-297" },
	{ 0x9c3ecb54c5cefdd8u, "-1.2450657943859326e-172" },
	{ 0xd48dd9f354366c21u, "-2.0403884006401313e+99" },
	{ 0x62dc08d64bdbf090u, "1.6531441360879889e+168" },
	{ 0x1304145212ca3f70u, "4.550544609882556e-217" },
	{ 0x356f8bd11711eb57u, "2.634858158773902e-51" },
	{ 0xa2f7647a952e1b8bu, "-3.069294655753937e-140" },
	{ 0x03f8670d3e361858u, "1.5650179277057452e-289" },
	{ 0x5e617f8e99edbce7u, "4.370015838755655e+146" },
	{ 0x9f452c075f27ff08u, "-4.81896657125812e-158" },
	{ 0x20918fa774057241u, "8.382530048134057e-152" },
	{ 0x965768e0f589d99au, "-4.77857526286792e-201" },
	{ 0xd5157e9d7bd55ee6u, "-7.522249387832486e+101" },
	{ 0x22bfb8e0931719fdu, "2.6013873678573284e-141" },
	{ 0x62d74145ddd4a054u, "1.3713029962237035e+168" },
	{ 0xa0931ed42ecdcc0au, "-9.126825325860168e-152" },
	{ 0x4f91540c27756991u, "1.95945436602899e+75" },
	{ 0x3a775505e88e752fu, "4.711884393621409e-27" },
	{ 0x9c461cb5d15b77f2u, "-1.7880656148849774e-172" },
	{ 0xb9b338eb3fdf2348u, "-9.477345146907405e-31" },
	{ 0x2891dd3c3096c6c8u, "2.9016511834537835e-113" },
	{ 0xa104a795bd4aeab0u, "-1.261971519223374e-149" },
	{ 0x8dce6f52f0be600du, "-3.5658641838890846e-242" },
	{ 0xafdd87333253b562u, "-3.984529127601709e-78" },
	{ 0x6361b9f8f33c1a7fu, "5.351917985767459e+170" },
	{ 0x7b862eace1d7300fu, "1.0555357775202995e+287" },
	{ 0x14186ebf9a8137e9u, "7.257598590133459e-212" },
	{ 0x0c2282666be49ee7u, "3.2315090305308215e-250" },
	{ 0x1bea85931a953ccau, "3.3510053402371645e-174" },
	{ 0x8329c05b09e80319u, "-2.0160202867656178e-293" },
	{ 0x41536363f6724ba0u, "5082511.850726038" },
	{ 0xbd65693b3d0840fbu, "-6.085389303609578e-13" },
	{ 0x64409ddbb45f51c3u, "8.219597356351074e+174" },
	{ 0x6bba8d2141c9886eu, "8.728961686405993e+210" },
	{ 0xe7a28cbdd2df2c20u, "-1.652973258755454e+191" },
	{ 0x7db224cb98b20411u, "2.966486299736274e+297" },
	{ 0x852395744b1e943eu, "-6.58493041852723e-284" },
	{ 0xede26c2e2ce933e1u, "-2.081024875708642e+221" },
	{ 0xfa285a0db869135cu, "-2.76271793374875e+280" },
	{ 0x205bc308119b4fe5u, "8.282291039612687e-153" },
	{ 0x7ab366023a782ebbu, "1.1267912157435466e+283" },
	{ 0xa74c46118f32a1f2u, "-2.1898504613824597e-119" },
	{ 0x9da9b14dda36e0d6u, "-8.714056170349967e-166" },
	{ 0x12fad8029d42f670u, "3.0417741876462856e-217" },
	{ 0x365fdcd647bc7548u, "8.720522466155504e-47" },
	{ 0xea3a0683ead81dcdu, "-5.0998257845138824e+203" },
	{ 0xbfbd7d143437f5abu, "-0.11518980288379647" },
	{ 0x11b41900043e3ef5u, "2.171844089388163e-223" },
	{ 0x6953404844e9e4a5u, "2.3024635235992676e+199" },
	{ 0x3fc2a9087219c1dau, "0.1457834775096803" },
	{ 0x0beddb070f7a0443u, "3.2577600308341504e-251" },
	{ 0x482ea7602d1ef7bfu, "5.2154757292923025e+39" },
	{ 0x87efda6b5e68b7cau, "-1.8841999431863786e-270" },
	{ 0xf91acb8d9279b1e9u, "-2.319273180505259e+275" },
	{ 0x1799e72821af214au, "5.544369274150318e-195" },
	{ 0x236eba1f5cb58b8eu, "5.1605113728748556e-138" },
	{ 0x7349dbc4e414a8aau, "2.260004655925296e+247" },
	{ 0x54ba1e74fb019df4u, "1.4282185372235206e+100" },
	{ 0xbb9fab2ba82cb2cdu, "-1.6765235722807067e-21" },
	{ 0x436eb2479997dc2au, "6.912215912486536e+16" },
	{ 0x4375063e6005b24bu, "9.468543167438149e+16" },
	{ 0x3bb090fa05b9e2e4u, "3.508053663065558e-21" },
	{ 0x4047bd595d705704u, "47.4792897032294" },
	{ 0x3c29dc7982453262u, "7.009700187430136e-19" },
	{ 0x43bd80c6fe990577u, "2.1259178209101391e+18" },
	{ 0x3c614166422ce660u, "7.483365746018077e-18" },
	{ 0x3fe7603d4d3e8750u, "0.7304979809452821" },
	{ 0x3c6f7fc895a2bbb5u, "1.3660580664394516e-17" },
	{ 0x429b61675eb2598fu, "7526290009238.39" },
	{ 0x3c1b231720552816u, "3.6777590019259966e-19" },
	{ 0x451dc8f4a90494e5u, "9.001958812493791e+24" },
	{ 0x3ff4ba2403dd867du, "1.2954445029248796" },
	{ 0x449dcd2f93217f24u, "3.518340966472537e+22" },
	{ 0x3c8b485b6bcb87bdu, "4.732784472468192e-17" },
	{ 0x412a957a84aba3e5u, "871101.2591220109" },
	{ 0x3bfbde7885893e17u, "9.442393466124831e-20" },
	{ 0x433ead3cfc184f76u, "8634726740414326.0" },
	{ 0x441f832d37eaa846u, "1.4532533473972542e+20" },
	{ 0x4360faa1040afcecu, "3.823335273502499e+16" },
	{ 0x3c36f6032da0b20cu, "1.2447175449631364e-18" },
	{ 0x43dbd35f01e000c9u, "8.020202883071026e+18" },
	{ 0x3ee83d2c223b396cu, "1.1558034266026452e-05" },
	{ 0x40219888bf0a65cau, "8.797918291110268" },
	{ 0x44d4904b3f619754u, "3.8843633185514414e+23" },
	{ 0x418bb3b5befb39dbu, "58095287.872668944" },
	{ 0x42c509a1b053e1feu, "46262223153091.984" },
	{ 0x423381cf41b54228u, "83782222261.25842" },
	{ 0x435a756c53e44f46u, "2.9789830075464984e+16" },
	{ 0x3bc4b716b8d3d881u, "8.773224414107805e-21" },
	{ 0x44c8602b8f6959f9u, "2.302216437264961e+23" },
	{ 0x43af54f5015cecf2u, "1.1288493497111329e+18" },
	{ 0x422ebd61bb1d209au, "66013158798.563675" },
	{ 0x3ba829985d17ccc5u, "2.5583022010638156e-21" },
	{ 0x3d902ec38fe4a015u, "3.679513506668257e-12" },
	{ 0x3e3d2031e7717f3cu, "6.781369791310883e-09" },
	{ 0x4014bc5c64d918dfu, "5.183946204901274" },
	{ 0x418f7884c3bd9cffu, "65999000.4675846" },
	{ 0x3ed4e692f656d6f1u, "4.983110419789472e-06" },
	{ 0x446627dcd42465f2u, "3.2696061882940795e+21" },
	{ 0x43f5bc6c1e90176cu, "2.5059930383045804e+19" },
	{ 0x3e3281be6549dcbcu, "4.308952823557982e-09" },
	{ 0x40c131583713de49u, "8802.689180835283" },
	{ 0x3fcc1b1d19546830u, "0.21957744347383956" },
	{ 0x3d4d8a2d011bd379u, "2.0989254218471287e-13" },
	{ 0x3c2250ffa67e16f0u, "4.96467041602322e-19" },
	{ 0x3f474e208355afc7u, "0.0007112177615176068" },
	{ 0x3d37221bba34e7a9u, "8.218576250160404e-14" },
	{ 0x3f3d88a4a7b38940u, "0.00045064945125096803" },
	{ 0x412c4047bd00d017u, "925731.8691468266" },
	{ 0x428bd583845862d2u, "3825481059084.3525" },
	{ 0x3fdf9ba76d608ec2u, "0.49387536698689527" },
	{ 0x43d8d9d065b757b6u, "7.162765848570943e+18" },
	{ 0x3c8a15630daa49c0u, "4.524773383166358e-17" },
	{ 0x3f4b27de72d124aau, "0.0008287273573241067" },
	{ 0x3c3019d194756558u, "8.728290543523024e-19" },
	{ 0x3f46399ce8474f33u, "0.0006782547139274397" },
	{ 0x3fad36bb5bddf205u, "0.05705819603369736" },
	{ 0x433711399fb2f2b8u, "6492863654458040.0" },
	{ 0x3d15853d5b9978bau, "1.911401481170605e-14" },
	{ 0x3e316719ccc798ceu, "4.051890556129247e-09" },
	{ 0x3ef9ed78b6be078du, "2.4726508328416385e-05" },
	{ 0x3d84e1f9c2371f9bu, "2.374090088848343e-12" },
	{ 0x44114764241444eau, "7.968473139922511e+19" },
	{ 0x3cd4c57f42dfb5ebu, "1.1530483846724604e-15" },
	{ 0x4441134147abe4abu, "6.299642364337412e+20" },
	{ 0x4083ff53a28f6289u, "639.9158374025293" },
	{ 0x44b44bd35addd110u, "9.584606519190101e+22" },
	{ 0x41dd83052c158db1u, "1980503216.3367732" },
	{ 0x4500f18621103a07u, "2.5604222102974416e+24" },
	{ 0x4199ab73eb502b02u, "107666682.82828906" },
	{ 0x3c23bb8061667b78u, "5.348485239905935e-19" },
	{ 0x3f27798f0df34494u, "0.00017909880896252851" },
	{ 0x42d1b3f45b0a68deu, "77858385701283.47" },
	{ 0x42995e3857b93c69u, "6973115723343.103" },
	{ 0x3dcb82babb01e7b4u, "5.0041602264678225e-11" },
	{ 0x44d4d5239eec4d0bu, "3.935162115749853e+23" },
	{ 0x3cd05347ca9dcc04u, "9.062369855040522e-16" },
	{ 0x40b008d27b99c139u, "4104.8221984955535" },
	{ 0x419ef91284465e8au, "129909921.06872001" },
	{ 0x3ba2982ff1e57e87u, "1.968767317052794e-21" },
	{ 0x432ac6009fd9a5cbu, "3768027689308901.5" },
	{ 0x4262fecc71265fb9u, "652673780018.9913" },
	{ 0x401fdee58418e55cu, "7.96767240907624" },
	{ 0x4439233ccdfa0869u, "4.637077326064355e+20" },
	{ 0x3d061ec4e3123e5eu, "9.823338479168292e-15" },
	{ 0x4443916f54e4b197u, "7.219356511992093e+20" },
	{ 0x3d3a03c84070d0b6u, "9.242304467980709e-14" },
	{ 0x40a0a9ee7c35baceu, "2132.965791396192" },
	{ 0x3fb919c289e18f7au, "0.09804931513059315" },
	{ 0x3fe12ebf9be830c7u, "0.5369566006716234" },
	{ 0x450154792327d10cu, "2.618831538408229e+24" },
	{ 0x40556503a00c84b9u, "85.57834626410012" },
	{ 0x3c229ef04468b050u, "5.047192505208596e-19" },
	{ 0x42f90ff4ef726954u, "440901192590997.25" },
	{ 0x3f3b9e3470ca1413u, "0.00042141704833681507" },
	{ 0x3becc61926187589u, "4.874474921804524e-20" },
	{ 0x3c792aeac6bc3b07u, "2.1829452223435152e-17" },
	{ 0x3c1fa65705a894c8u, "4.289343044151356e-19" },
	{ 0x3ffba9d52ea9959du, "1.7289630720855265" },
	{ 0x408574cccccccccdu, "686.6" },
	{ 0x407d68fdf3b645a2u, "470.562" },
	{ 0x408c2489a0275254u, "900.5672" },
	{ 0x408a3fcfbfc6540du, "839.97644" },
	{ 0x407b829ba5e353f8u, "440.163" },
	{ 0x4082179bef49cf57u, "578.95114" },
	{ 0x4055800000000000u, "86.0" },
	{ 0x407b76c0ebedfa44u, "439.4221" },
	{ 0x407222b702602c91u, "290.16968" },
	{ 0x40818c0000000000u, "561.5" },
	{ 0x4080564304ccee5bu, "522.782724" },
	{ 0x408c59ae147ae148u, "907.21" },
	{ 0x40737b2b020c49bau, "311.698" },
	{ 0x408dd646cd29131fu, "954.784571" },
	{ 0x408c240000000000u, "900.5" },
	{ 0x4073080000000000u, "304.5" },
	{ 0x408e4385f06f6944u, "968.4404" },
	{ 0x40710f645a1cac08u, "272.962" },
	{ 0x40691ef34d6a161eu, "200.9672" },
	{ 0x405c800000000000u, "114.0" },
	{ 0x4082e80000000000u, "605.0" },
	{ 0x4080d00000000000u, "538.0" },
	{ 0x40802024dd2f1aa0u, "516.018" },
	{ 0x4080fff93dd97f63u, "543.9967" },
	{ 0x405e800000000000u, "122.0" },
	{ 0x4085980000000000u, "691.0" },
	{ 0x408d169ba5e353f8u, "930.826" },
	{ 0x4079dc62a90cd424u, "413.774087" },
	{ 0x408cdb5c28f5c28fu, "923.42" },
	{ 0x406ec8dd2f1a9fbeu, "246.277" },
	{ 0x405fbdf3b645a1cbu, "126.968" },
	{ 0x408c2728f5c28f5cu, "900.895" },
	{ 0x4080680000000000u, "525.0" },
	{ 0x4067ee74538ef34du, "191.4517" },
	{ 0x403d68f5c28f5c29u, "29.41" },
	{ 0x40602ec432ca57a8u, "129.46145" },
	{ 0x408e880000000000u, "977.0" },
	{ 0x4068433333333333u, "194.1" },
	{ 0x4027a8f5c28f5c29u, "11.83" },
	{ 0x40742147ae147ae1u, "322.08" },
	{ 0x406e8ef1a9fbe76du, "244.467" },
	{ 0x405a38ac322291fbu, "104.88551" },
	{ 0x408231e4bf4cb189u, "582.236693" },
	{ 0x407fe7851eb851ecu, "510.47" },
	{ 0x40866d91e108c3f4u, "717.69623" },
	{ 0x408092d0e5604189u, "530.352" },
	{ 0x40374000a7c5ac47u, "23.25001" },
	{ 0x4079d66e978d4fdfu, "413.402" },
	{ 0x40833e5aee631f8au, "615.7944" },
	{ 0x4069888509bf9c63u, "204.26624" },
	{ 0x4080b00000000000u, "534.0" },
	{ 0x40808cf3bf2f5558u, "529.619017" },
	{ 0x4080f787c84b5dccu, "542.9413" },
	{ 0x408ac66666666666u, "856.8" },
	{ 0x408c96968c692f6fu, "914.82351" },
	{ 0x4089540000000000u, "810.5" },
	{ 0x4073bdeb851eb852u, "315.87" },
	{ 0x408bd4cccccccccdu, "890.6" },
	{ 0x406b433333333333u, "218.1" },
	{ 0x408bbc0000000000u, "887.5" },
	{ 0x4170f71f10000000u, "17789425.0" },
	{ 0x4070900000000000u, "265.0" },
	{ 0x429bd06358213400u, "7645458466893.0" },
	{ 0x42b020b47053de00u, "17732652258270.0" },
	{ 0x4159c72080000000u, "6757506.0" },
	{ 0x43fcc81f272af6a4u, "3.3183070103825695e+19" },
	{ 0x40a9b80000000000u, "3292.0" },
	{ 0x43d6e2b7146bac2au, "6.596326847618787e+18" },
	{ 0x426683b170d28000u, "773589796500.0" },
	{ 0x437016d1757ef69bu, "7.245901604162194e+16" },
	{ 0x445b1eda4b368484u, "2.0011410482149689e+21" },
	{ 0x0000000000000000u, "0.0" },
	{ 0x43a07970db3a0ac6u, "5.935520318313848e+17" },
	{ 0x43c2c24ef13d9a7bu, "2.7034592723843784e+18" },
	{ 0x41479ee280000000u, "3096005.0" },
	{ 0x40aa180000000000u, "3340.0" },
	{ 0x412ae30800000000u, "881028.0" },
	{ 0x41121e3800000000u, "296846.0" },
	{ 0x444fca3630de0c31u, "1.1728399073192907e+21" },
	{ 0x40f5ca7000000000u, "89255.0" },
	{ 0x430878909eefb810u, "860995247273730.0" },
	{ 0x40b4ea0000000000u, "5354.0" },
	{ 0x429b49de2aba1c00u, "7501018476167.0" },
	{ 0x436b86738b58a399u, "6.198124150712647e+16" },
	{ 0x4157e1c100000000u, "6260484.0" },
	{ 0x4024000000000000u, "10.0" },
	{ 0x4039000000000000u, "25.0" },
	{ 0x411a1bf000000000u, "427772.0" },
	{ 0x4307a8a2e0653fa0u, "832417745905652.0" },
	{ 0x4263463e78af8000u, "662263022972.0" },
	{ 0x40f844e000000000u, "99406.0" },
	{ 0x431f934b2b5d9310u, "2221918834353348.0" },
	{ 0x4207253e2dc80000u, "12426134969.0" },
	{ 0x444233c6fb1f7844u, "6.715446775613505e+20" },
	{ 0x441204644078c388u, "8.308946052200386e+19" },
	{ 0x4220843b36140000u, "35468974858.0" },
	{ 0x40a47c0000000000u, "2622.0" },
	{ 0x4299f4b9e81fc800u, "7134720428018.0" },
	{ 0x4147a81880000000u, "3100721.0" },
	{ 0x4089800000000000u, "816.0" },
};

static const struct text_case str_cases[] = {
	{ "", 0, "''" },
	{ "a", 1, "'a'" },
	{ "'", 1, "\"'\"" },
	{ "\"", 1, "'\"'" },
	{ "'\"", 2, "'\\'\"'" },
	{ "it's", 4, "\"it's\"" },
	{ "say \"hi\"", 8, "'say \"hi\"'" },
	{ "a\\b", 3, "'a\\\\b'" },
	{ "\t\n"
	"\x0d\x00\x1f\x7f ~", 8, "'\\t\\n\\r\\x00\\x1f\\x7f ~'" },
	{ "\xc2\x80\xc2\x9f\xc2\xa0\xc2\xa1\xc2\xac\xc2\xad\xc2\xae\xc3\xbf", 16, "'\\x80\\x9f\\xa0\xc2\xa1\xc2\xac\\xad\xc2\xae\xc3\xbf'" },
	{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, "'\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80'" },
	{ "\xcd\xb8\xce\x80\xd8\x80\xd8\x9c\xe2\x80\x8b\xe2\x80\x8f\xe2\x80\xa8\xe2\x80\xa9\xe2"
	"\x81\xa0\xef\xbb\xbf\xef\xbf\xb9\xef\xbf\xbe\xef\xbf\xbf", 35, "'\\u0378\\u0380\\u0600\\u061c\\u200b\\u200f\\u2028\\u2029\\u2060\\ufeff\\ufff9\\u"
	"fffe\\uffff'" },
	{ "\xed\xa0\x80\xed\xaf\xbf\xed\xb0\x80\xed\xbf\xbf", 12, "'\\ud800\\udbff\\udc00\\udfff'" },
	{ "\xee\x80\x80\xef\xa3\xbf\xf3\xb0\x80\x80\xf4\x8f\xbf\xbf\xf3\xa0\x80\x81\xf3\xa0\x84"
	"\x80", 22, "'\\ue000\\uf8ff\\U000f0000\\U0010ffff\\U000e0001\xf3\xa0\x84\x80'" },
	{ "\xc2\xa0\xe1\x9a\x80\xe2\x80\x80\xe2\x80\xaf\xe3\x80\x80", 14, "'\\xa0\\u1680\\u2000\\u202f\\u3000'" },
	{ "\xf0\x9f\x98\x80x\xf0\x9f\xaf\xba", 9, "'\xf0\x9f\x98\x80x\\U0001fbfa'" },
	{ "\xc3\xbcn\xc3\xaf""c\xc3\xb6""d\xc3\xa9", 11, "'\xc3\xbcn\xc3\xaf""c\xc3\xb6""d\xc3\xa9'" },
	{ "tab\tname", 8, "'tab\\tname'" },
	{ "x'y\"z", 5, "'x\\'y\"z'" },
	{ "back\\slash'quote", 16, "\"back\\\\slash'quote\"" },
	{ "\x16\xc9\x9b\xf1\xad\x8a\xa0", 7, "'\\x16\xc9\x9b\\U0006d2a0'" },
	{ "\x19\xea\x96\x8a\xf0\xa9\xb5\x97\xe4\xa8\xb0\xf3\xa4\xb5\x8f", 15, "'\\x19\xea\x96\x8a\xf0\xa9\xb5\x97\xe4\xa8\xb0\\U000e4d4f'" },
	{ "\xd3\xa5\xf4\x8d\xad\x8e\xe5\x83\x90\xe8\x8e\xb5\xc2\x9c\xeb\x9c\xb0", 17, "'\xd3\xa5\\U0010db4e\xe5\x83\x90\xe8\x8e\xb5\\x9c\xeb\x9c\xb0'" },
	{ "\xc3\xa6V\xc5\x89\xf0\xa9\xb3\x9f\x16\xf3\xb2\xaf\xb1", 14, "'\xc3\xa6V\xc5\x89\xf0\xa9\xb3\x9f\\x16\\U000f2bf1'" },
	{ "\x17\xf1\x91\xbe\xb7\xee\xb2\x87\xd5\xa0", 10, "'\\x17\\U00051fb7\\uec87\xd5\xa0'" },
	{ "?\x01", 2, "'?\\x01'" },
	{ "-", 1, "'-'" },
	{ "\xf3\x8f\x84\x9e\xc8\xaf\xf3\xb5\x81\x9c\xe4\xa8\x91\x12\xf3\x8d\x83\xbb", 18, "'\\U000cf11e\xc8\xaf\\U000f505c\xe4\xa8\x91\\x12\\U000cd0fb'" },
	{ "\xf3\xad\x8b\x99\xec\xba\x87\xf0\xb9\xb5\x9c", 11, "'\\U000ed2d9\xec\xba\x87\\U00039d5c'" },
	{ "\xe5\x81\xad\xe5\xae\xba\x1c\x19\xe6\x92\x97\x0c", 12, "'\xe5\x81\xad\xe5\xae\xba\\x1c\\x19\xe6\x92\x97\\x0c'" },
	{ "Q\xde\x8c""b", 4, "'Q\xde\x8c""b'" },
	{ "\xe9\xb3\xbb*\xf1\x99\xaa\xa5\xf4\x8a\x97\xb5\xf2\xba\x9e\xa9\xf0\xb5\x86\xa9", 20, "'\xe9\xb3\xbb*\\U00059aa5\\U0010a5f5\\U000ba7a9\\U000351a9'" },
	{ "\xf3\x91\xa1\xa2""e\xdf\xa3\xce\x81Q\xcb\xb7", 12, "'\\U000d1862e\xdf\xa3\\u0381Q\xcb\xb7'" },
	{ "'\xc5\x9e", 3, "\"'\xc5\x9e\"" },
	{ "\xf4\x81\xa7\xa8\xe4\xbf\xb3\xf4\x85\x9f\xbd\xf2\xbf\x89\x87\xf1\xbf\x94\x9a", 19, "'\\U001019e8\xe4\xbf\xb3\\U001057fd\\U000bf247\\U0007f51a'" },
	{ "b\xf3\xb6\x9a\x8d\xe3\x81\x84\x11\xc3\xac", 11, "'b\\U000f668d\xe3\x81\x84\\x11\xc3\xac'" },
	{ "\xf2\x9a\x8c\xb0\xd0\xbf", 6, "'\\U0009a330\xd0\xbf'" },
	{ "\xdf\x95\xe7\x87\x84\xf0\xb6\xbb\x8c\xd8\xb8", 11, "'\xdf\x95\xe7\x87\x84\\U00036ecc\xd8\xb8'" },
	{ "\xf3\xbc\x9a\xba", 4, "'\\U000fc6ba'" },
	{ "\xeb\xb7\x82", 3, "'\xeb\xb7\x82'" },
	{ "\x0d\xea\xa2\xb5\xd3\xb1\xec\x8c\xbf\xf2\xb9\xb3\xb2", 13, "'\\r\xea\xa2\xb5\xd3\xb1\xec\x8c\xbf\\U000b9cf2'" },
	{ "\xc6\xa0", 2, "'\xc6\xa0'" },
	{ "8\xf1\x8f\xa2\xb1", 5, "'8\\U0004f8b1'" },
	{ "\xdf\x9d", 2, "'\xdf\x9d'" },
	{ "\x1a\x0f", 2, "'\\x1a\\x0f'" },
	{ "\xe5\xb2\xbd\x0d\xe5\x8c\xa1\x16\x0c", 9, "'\xe5\xb2\xbd\\r\xe5\x8c\xa1\\x16\\x0c'" },
	{ "\xd7\x86", 2, "'\xd7\x86'" },
	{ "i\xca\xa1\xde\xbb\xe2\xb5\x88", 8, "'i\xca\xa1\\u07bb\xe2\xb5\x88'" },
	{ "\xc9\xadl\xf1\x96\xb2\x8d\xd4\xbcT\xe3\x91\xb6", 13, "'\xc9\xadl\\U00056c8d\xd4\xbcT\xe3\x91\xb6'" },
	{ "\xdf\xb4\xea\x86\x9f", 5, "'\xdf\xb4\xea\x86\x9f'" },
	{ "\xf3\xa0\x97\x90[\xf2\xb9\x89\x98\x12", 10, "'\\U000e05d0[\\U000b9258\\x12'" },
	{ "\x13\x0f\x0f\xe6\xb5\x81", 6, "'\\x13\\x0f\\x0f\xe6\xb5\x81'" },
	{ "\xf1\xa4\x82\x82\x06\xee\xa7\x96\xd9\x93\xd0\x86", 12, "'\\U00064082\\x06\\ue9d6\xd9\x93\xd0\x86'" },
	{ "x\xf2\xad\xa7\xa4\xdf\xb8", 7, "'x\\U000ad9e4\xdf\xb8'" },
	{ "\xe1\x9c\x98\xc2\xa0\xe2\x8c\xa9", 8, "'\\u1718\\xa0\xe2\x8c\xa9'" },
	{ "\xf2\xbb\x9f\x88\xc7\x9a\xec\x81\x9b\xeb\x85\xb9", 12, "'\\U000bb7c8\xc7\x9a\xec\x81\x9b\xeb\x85\xb9'" },
	{ "\xf1\x93\xb7\x8d)", 5, "'\\U00053dcd)'" },
	{ "\x1b\xc7\x90\xd9\x9f\xf3\x94\xbe\x8c\xf3\x88\x88\x87", 13, "'\\x1b\xc7\x90\xd9\x9f\\U000d4f8c\\U000c8207'" },
	{ "b", 1, "'b'" },
	{ "\xc9\xa1\xe9\x8d\x8e\xc8\x9e\xf0\x99\x86\xb9`", 12, "'\xc9\xa1\xe9\x8d\x8e\xc8\x9e\\U000191b9`'" },
	{ "6", 1, "'6'" },
	{ "\x10\xea\xb9\xaa\xe8\x9c\xb2", 7, "'\\x10\xea\xb9\xaa\xe8\x9c\xb2'" },
	{ "\xcd\xaa\xf1\x94\xb8\xa8\xf0\x91\xad\xa7\xf3\x99\x8b\x8d", 14, "'\xcd\xaa\\U00054e28\\U00011b67\\U000d92cd'" },
	{ "\xeb\x98\x8a\xf2\x8b\xaf\x9c\xe4\x88\xac\x19", 11, "'\xeb\x98\x8a\\U0008bbdc\xe4\x88\xac\\x19'" },
	{ "\xf1\xaa\xb1\x86\xf0\xa9\x8d\xb4\xc9\xb8\xf3\xbf\x9d\xbd\xd1\xab\xe7\x8d\x8f", 19, "'\\U0006ac46\xf0\xa9\x8d\xb4\xc9\xb8\\U000ff77d\xd1\xab\xe7\x8d\x8f'" },
	{ "\x10R\xc3\xb5", 4, "'\\x10R\xc3\xb5'" },
	{ "/\xf0\xac\x87\x8b\xc9\xa8\xe2\xa2\xac\xe8\x8a\x87\xd0\x9d", 15, "'/\xf0\xac\x87\x8b\xc9\xa8\xe2\xa2\xac\xe8\x8a\x87\xd0\x9d'" },
	{ "\xf3\x9f\xa1\x8c\xe6\x8c\x89O", 8, "'\\U000df84c\xe6\x8c\x89O'" },
	{ "p", 1, "'p'" },
	{ "\xd8\x83\xf3\xaa\xbf\x80", 6, "'\\u0603\\U000eafc0'" },
	{ "\xf2\xb8\x81\xba\xca\xbd\x0f\xf3\xa8\x8e\x85", 11, "'\\U000b807a\xca\xbd\\x0f\\U000e8385'" },
	{ "\xf2\xad\xbd\xa9\xef\x83\xa1\xe8\x9b\x9c\xe0\xb8\x85\xf2\x96\x85\xb8", 17, "'\\U000adf69\\uf0e1\xe8\x9b\x9c\xe0\xb8\x85\\U00096178'" },
	{ "\x01\x03\xea\x93\xa1\xf3\xb6\x8b\x9a", 9, "'\\x01\\x03\xea\x93\xa1\\U000f62da'" },
	{ "\xf2\x9b\xad\x81", 4, "'\\U0009bb41'" },
	{ "\xc2\xab\x00\x05", 4, "'\xc2\xab\\x00\\x05'" },
	{ "x\xcc\x81\x15\xf2\xa6\x97\x8f\xcd\xaf", 10, "'x\xcc\x81\\x15\\U000a65cf\xcd\xaf'" },
	{ "I\xf2\xae\xb3\xb0\xda\xad", 7, "'I\\U000aecf0\xda\xad'" },
	{ "\xe8\x8d\xa2\xec\x95\x8d\xeb\x9b\x8e\xdc\xbd\xd9\xac", 13, "'\xe8\x8d\xa2\xec\x95\x8d\xeb\x9b\x8e\xdc\xbd\xd9\xac'" },
	{ "\xd5\xb8\xe9\xb7\xa5", 5, "'\xd5\xb8\xe9\xb7\xa5'" },
	{ "\xd6\x8d\xc7\x82\xec\x8c\xb2\xe9\x8b\xa5", 10, "'\xd6\x8d\xc7\x82\xec\x8c\xb2\xe9\x8b\xa5'" },
	{ "\xf2\xa1\x91\x97", 4, "'\\U000a1457'" },
	{ "\xcf\x83\xcb\x82\xf2\x90\xac\xbe\x11\xe4\xb8\x96\x17", 13, "'\xcf\x83\xcb\x82\\U00090b3e\\x11\xe4\xb8\x96\\x17'" },
	{ "\xe2\xbb\x90\xf1\xad\x9c\x83""1", 8, "'\xe2\xbb\x90\\U0006d7031'" },
	{ "\xdb\xb4\xd5\xaf\xdd\xaa\xe9\x87\xbc", 9, "'\xdb\xb4\xd5\xaf\xdd\xaa\xe9\x87\xbc'" },
	{ "\x04\xee\xab\xaf\xf2\x97\xa9\x98", 8, "'\\x04\\ueaef\\U00097a58'" },
	{ "\xf1\x83\xa8\x90\x00\x17\xed\x9e\x8d", 9, "'\\U00043a10\\x00\\x17\xed\x9e\x8d'" },
	{ "\xee\xbe\xb7J\xe5\x97\xb2", 7, "'\\uefb7J\xe5\x97\xb2'" },
	{ "\xf3\x83\x97\xb7", 4, "'\\U000c35f7'" },
	{ "!", 1, "'!'" },
	{ "\xdc\xb8\xf1\x87\x9e\xac\xe8\x9f\x91", 9, "'\xdc\xb8\\U000477ac\xe8\x9f\x91'" },
	{ "\xef\xaa\x9b", 3, "'\xef\xaa\x9b'" },
	{ "\xc6\xaf\x1b\xf1\x8e\x8a\xbe\xf3\x94\xbc\x80\x02", 12, "'\xc6\xaf\\x1b\\U0004e2be\\U000d4f00\\x02'" },
	{ "\xe5\x82\xbf\x10H\xda\x85""7a", 9, "'\xe5\x82\xbf\\x10H\xda\x85""7a'" },
	{ "\xca\x81\xf3\xaa\xa2\xaa\x06X\xe1\x99\x92\xc5\x8d", 13, "'\xca\x81\\U000ea8aa\\x06X\xe1\x99\x92\xc5\x8d'" },
	{ "\x01\xde\xb6\xf1\xb4\xb9\x99", 7, "'\\x01\\u07b6\\U00074e59'" },
	{ "\xd8\x99", 2, "'\xd8\x99'" },
	{ "\xc7\x9f\xe4\xa8\xb3", 5, "'\xc7\x9f\xe4\xa8\xb3'" },
	{ "\xeb\xa4\x90\xf0\xb4\xa5\x94", 7, "'\xeb\xa4\x90\\U00034954'" },
	{ "\x08\xf3\xa5\xbc\xa2j", 6, "'\\x08\\U000e5f22j'" },
	{ "\xd0\xa3\xe4\x81\xaa\xe5\x80\x82\xf2\x8d\x92\xbc\xf2\x90\xb6\x93\xf1\x85\x9b\xaa", 20, "'\xd0\xa3\xe4\x81\xaa\xe5\x80\x82\\U0008d4bc\\U00090d93\\U000456ea'" },
};

static const struct text_case bytes_cases[] = {
	{ "", 0, "b''" },
	{ "\x27", 1, "b\"'\"" },
	{ "\x22", 1, "b'\"'" },
	{ "\x27\x22", 2, "b'\\'\"'" },
	{ "\x5c", 1, "b'\\\\'" },
	{ "\x00\x03\x06\x09\x0c\x0f\x12\x15\x18\x1b\x1e\x21\x24\x27\x2a\x2d\x30\x33\x36\x39\x3c\x3f\x42\x45\x48\x4b\x4e\x51\x54\x57\x5a\x5d\x60\x63\x66\x69\x6c\x6f\x72\x75\x78\x7b\x7e\x81\x84\x87\x8a\x8d\x90\x93\x96\x99\x9c\x9f\xa2\xa5\xa8\xab\xae\xb1\xb4\xb7\xba\xbd\xc0\xc3\xc6\xc9\xcc\xcf\xd2\xd5\xd8\xdb\xde\xe1\xe4\xe7\xea\xed\xf0\xf3\xf6\xf9\xfc\xff", 86, "b\"\\x00\\x03\\x06\\t\\x0c\\x0f\\x12\\x15\\x18\\x1b\\x1e!$'*-0369<?BEHKNQTWZ]`cfi"
	"lorux{~\\x81\\x84\\x87\\x8a\\x8d\\x90\\x93\\x96\\x99\\x9c\\x9f\\xa2\\xa5\\xa8\\xa"
	"b\\xae\\xb1\\xb4\\xb7\\xba\\xbd\\xc0\\xc3\\xc6\\xc9\\xcc\\xcf\\xd2\\xd5\\xd8\\xdb"
	"\\xde\\xe1\\xe4\\xe7\\xea\\xed\\xf0\\xf3\\xf6\\xf9\\xfc\\xff\"" },
	{ "\x61\x62\x63\x00\x7f\x80\xff", 7, "b'abc\\x00\\x7f\\x80\\xff'" },
	{ "\x69\x74\x27\x73", 4, "b\"it's\"" },
	{ "\x09\x0a\x0d", 3, "b'\\t\\n\\r'" },
};

/* Big ints as minimal little-endian two's complement bytes; "..." where Python
   raises (more than 4300 digits). */
static const struct int_case int_cases[] = {
	{ "\x00", 1, "0" },
	{ "\x01", 1, "1" },
	{ "\xff", 1, "-1" },
	{ "\xff\xff\xff\xff\xff\xff\xff\x07", 8, "576460752303423487" },
	{ "\x00\x00\x00\x00\x00\x00\x00\xf8", 8, "-576460752303423488" },
	{ "\x00\x00\x00\x00\x00\x00\x00\x08", 8, "576460752303423488" },
	{ "\xff\xff\xff\xff\xff\xff\xff\xf7", 8, "-576460752303423489" },
	{ "\xff\xff\xff\xff\xff\xff\xff\x7f", 8, "9223372036854775807" },
	{ "\x00\x00\x00\x00\x00\x00\x00\x80\xff", 9, "-9223372036854775808" },
	{ "\x00\x00\x00\x00\x00\x00\x00\x00\x01", 9, "18446744073709551616" },
	{ "\x00\x00\x00\x00\x00\x00\x00\x00\xff", 9, "-18446744073709551616" },
	{ "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x00", 17, "170141183460469231731687303715884105728" },
	{ "\x07\x00\x00\x00\x00\x61\xf5\xb9\xab\xbf\xa4\x5c\xc3\xf1\x29\x63\x1d", 17, "10000000000000000000000000000000000000007" },
	{ "\x00\x00\x00\x00\x00\x00\x9c\x4a\x02\xcb\xfa\x3b\x2d\x78\x99\x6d\x06\xea\xc4\x93\xbb", 21, "-100000000000000000000000000000000000000000000000000" },
};

/* The text OUT holds, compared with EXPECT; OUT is left empty. */
static void check_text(mp_out *out, const char *expect)
{
	size_t len;
	char *got = mp_out_take(out, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_STRING_EQUAL(got, expect);
	if (strcmp(got, expect) != 0)
		fprintf(stderr, "\n  expected %s\n  got      %s\n", expect, got);
	free(got);
}

static void test_floats(void)
{
	for (size_t i = 0; i < sizeof float_cases / sizeof float_cases[0]; i++) {
		mp_out out;
		double d;

		memcpy(&d, &float_cases[i].bits, sizeof d);
		mp_out_init(&out);
		mp_repr_float(&out, d);
		check_text(&out, float_cases[i].expect);
	}
}

static void test_strings(void)
{
	for (size_t i = 0; i < sizeof str_cases / sizeof str_cases[0]; i++) {
		mp_out out;

		mp_out_init(&out);
		mp_repr_str(&out, str_cases[i].text, str_cases[i].len);
		check_text(&out, str_cases[i].expect);
	}
}

/* Bytes that are not UTF-8 read as lone surrogates (surrogateescape). */
static void test_invalid_utf8(void)
{
	mp_out out;

	mp_out_init(&out);
	mp_repr_str(&out, "a\xff\xc3(\xe2\x82", 6);
	check_text(&out, "'a\\udcff\\udcc3(\\udce2\\udc82'");
}

static void test_bytes(void)
{
	for (size_t i = 0; i < sizeof bytes_cases / sizeof bytes_cases[0]; i++) {
		mp_out out;

		mp_out_init(&out);
		mp_repr_bytes(&out, bytes_cases[i].text, bytes_cases[i].len);
		check_text(&out, bytes_cases[i].expect);
	}
}

static void test_ints(void)
{
	mp_heap *heap = mp_heap_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(heap);
	for (size_t i = 0; i < sizeof int_cases / sizeof int_cases[0]; i++) {
		mp_out out;
		mp_val v;

		CU_ASSERT_FATAL(mp_heap_int_le(heap, (const unsigned char *)int_cases[i].le, int_cases[i].len, &v) ==
				MP_OK);
		mp_out_init(&out);
		mp_repr(heap, v, &out);
		check_text(&out, int_cases[i].expect);
	}
	mp_heap_free(heap);
}

/* The little-endian two's complement bytes of ±(10**K - MINUS), in BUF (LEN returned). */
static size_t pow10_le(unsigned k, unsigned minus, int sign, unsigned char *buf, size_t cap)
{
	size_t len = 1;
	unsigned borrow = minus, carry = 1;

	memset(buf, 0, cap);
	buf[0] = 1;
	for (unsigned i = 0; i < k; i++) {
		unsigned c = 0;

		for (size_t j = 0; j < len; j++) {
			unsigned x = buf[j] * 10u + c;

			buf[j] = (unsigned char)x;
			c = x >> 8;
		}
		if (c != 0)
			buf[len++] = (unsigned char)c;
	}
	for (size_t j = 0; borrow != 0 && j < len; j++) {
		unsigned x = buf[j];

		buf[j] = (unsigned char)(x - borrow);
		borrow = x < borrow;
	}
	len++; /* room for the sign bit */
	if (sign < 0)
		for (size_t j = 0; j < len; j++) {
			unsigned x = (unsigned char)~buf[j] + carry;

			buf[j] = (unsigned char)x;
			carry = x >> 8;
		}
	return len;
}

/* Python refuses to print ints of more than 4300 digits; memprof writes "..." there. */
static void test_int_digit_limit(void)
{
	static const struct {
		unsigned k, minus;
		int sign;
		size_t ndigits; /* 0: "..." */
	} cases[] = {
		{ 4299, 0, 1, 4300 }, { 4300, 1, 1, 4300 }, { 4300, 1, -1, 4300 },
		{ 4300, 0, 1, 0 },    { 4300, 0, -1, 0 },   { 6000, 0, 1, 0 },
	};
	static unsigned char buf[4096];
	mp_heap *heap = mp_heap_new();

	CU_ASSERT_PTR_NOT_NULL_FATAL(heap);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t len = pow10_le(cases[i].k, cases[i].minus, cases[i].sign, buf, sizeof buf), n;
		mp_out out;
		mp_val v;
		char *got;

		CU_ASSERT_FATAL(mp_heap_int_le(heap, buf, len, &v) == MP_OK);
		mp_out_init(&out);
		mp_repr(heap, v, &out);
		got = mp_out_take(&out, &n);
		CU_ASSERT_PTR_NOT_NULL_FATAL(got);
		if (cases[i].ndigits == 0) {
			CU_ASSERT_STRING_EQUAL(got, "...");
		} else {
			const char *digits = got + (cases[i].sign < 0);

			CU_ASSERT_EQUAL(strlen(digits), cases[i].ndigits);
			CU_ASSERT_EQUAL(digits[0], cases[i].minus ? '9' : '1');
			CU_ASSERT_EQUAL(digits[cases[i].ndigits - 1], cases[i].minus ? '9' : '0');
			CU_ASSERT_EQUAL(got[0] == '-', cases[i].sign < 0);
		}
		free(got);
	}
	mp_heap_free(heap);
}

static mp_val str_val(mp_heap *h, const char *s)
{
	mp_val v;

	CU_ASSERT_FATAL(mp_heap_str(h, s, strlen(s), &v) == MP_OK);
	return v;
}

static mp_val make(mp_heap *h, enum mp_vtype t, const mp_val *items, size_t n)
{
	mp_val v;

	CU_ASSERT_FATAL(mp_heap_make(h, t, items, n, &v) == MP_OK);
	return v;
}

/* {'a': [1, (2,), (), (3, 'x'), {}, [], None, True, False, 1.5, b'b'],
    "k'": {'n': -2**70}, 5: 'v', (1, 2): 2.5e-07} */
static void test_containers(void)
{
	static const unsigned char minus_2_70[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xc0 };
	mp_heap *h = mp_heap_new();
	mp_val one = mp_val_from_small_int(1), two = mp_val_from_small_int(2), three = mp_val_from_small_int(3);
	mp_val f15, f25, big, b, list, inner, pair, top;
	mp_out out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_FATAL(mp_heap_float(h, 1.5, &f15) == MP_OK);
	CU_ASSERT_FATAL(mp_heap_float(h, 2.5e-7, &f25) == MP_OK);
	CU_ASSERT_FATAL(mp_heap_int_le(h, minus_2_70, sizeof minus_2_70, &big) == MP_OK);
	CU_ASSERT_FATAL(mp_heap_bytes(h, "b", 1, &b) == MP_OK);
	{
		mp_val x3[2] = { three, str_val(h, "x") };
		mp_val items[] = { one, make(h, MP_T_TUPLE, &two, 1), make(h, MP_T_TUPLE, NULL, 0),
				   make(h, MP_T_TUPLE, x3, 2), make(h, MP_T_DICT, NULL, 0), make(h, MP_T_LIST, NULL, 0),
				   MP_NONE, MP_TRUE, MP_FALSE, f15, b };

		list = make(h, MP_T_LIST, items, sizeof items / sizeof items[0]);
	}
	{
		mp_val kv[2] = { str_val(h, "n"), big };

		inner = make(h, MP_T_DICT, kv, 1);
	}
	{
		mp_val p[2] = { one, two };

		pair = make(h, MP_T_TUPLE, p, 2);
	}
	{
		mp_val kv[] = { str_val(h, "a"), list, str_val(h, "k'"), inner, mp_val_from_small_int(5),
				str_val(h, "v"), pair, f25 };

		top = make(h, MP_T_DICT, kv, 4);
	}
	mp_out_init(&out);
	mp_repr(h, top, &out);
	/* python3: repr() of the dict above */
	check_text(&out, "{'a': [1, (2,), (), (3, 'x'), {}, [], None, True, False, 1.5, b'b'], \"k'\": "
			 "{'n': -1180591620717411303424}, 5: 'v', (1, 2): 2.5e-07}");
	mp_heap_free(h);
}

/* Past 1000 levels Python raises RecursionError; memprof writes "..." there. */
static void test_depth_limit(void)
{
	mp_heap *h = mp_heap_new();
	mp_val v = mp_val_from_small_int(7);
	char *got;
	size_t len;
	mp_out out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	for (int i = 0; i < 1005; i++)
		v = make(h, MP_T_LIST, &v, 1);
	mp_out_init(&out);
	mp_repr(h, v, &out);
	got = mp_out_take(&out, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	CU_ASSERT_EQUAL(len, 1001 + 3 + 1001);
	CU_ASSERT_EQUAL(strspn(got, "["), 1001);
	CU_ASSERT_EQUAL(memcmp(got + 1001, "...]", 4), 0);
	free(got);
	mp_heap_free(h);
}

/* A list that holds the same sub-list twice, 40 levels deep, would print 2**40
   leaves; the value budget stops it. The test passing at all is the check. */
static void test_value_budget(void)
{
	mp_heap *h = mp_heap_new();
	mp_val v = mp_val_from_small_int(0);
	FILE *null = fopen("/dev/null", "w");
	mp_out out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_PTR_NOT_NULL_FATAL(null);
	for (int i = 0; i < 40; i++) {
		mp_val two[2] = { v, v };

		v = make(h, MP_T_LIST, two, 2);
	}
	mp_out_init_file(&out, null);
	mp_repr(h, v, &out);
	CU_ASSERT_EQUAL(mp_out_flush(&out), MP_OK);
	mp_out_free(&out);
	fclose(null);
	mp_heap_free(h);
}

static void test_printable_table(void)
{
	/* spot checks of category edges (python3: chr(c).isprintable()) */
	CU_ASSERT_TRUE(mp_repr_isprintable(' '));
	CU_ASSERT_FALSE(mp_repr_isprintable(0x7f));
	CU_ASSERT_FALSE(mp_repr_isprintable(0xa0));
	CU_ASSERT_TRUE(mp_repr_isprintable(0xa1));
	CU_ASSERT_FALSE(mp_repr_isprintable(0xad));
	CU_ASSERT_TRUE(mp_repr_isprintable(0x377));
	CU_ASSERT_FALSE(mp_repr_isprintable(0x378));
	CU_ASSERT_FALSE(mp_repr_isprintable(0xd800));
	CU_ASSERT_FALSE(mp_repr_isprintable(0xe000));
	CU_ASSERT_TRUE(mp_repr_isprintable(0x1f600));
	CU_ASSERT_FALSE(mp_repr_isprintable(0x10ffff));
	CU_ASSERT_FALSE(mp_repr_isprintable(0x110000));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "floats: shortest round trip, Python layout", test_floats },
		{ "str: quotes, escapes, isprintable", test_strings },
		{ "str: invalid UTF-8 as lone surrogates", test_invalid_utf8 },
		{ "bytes", test_bytes },
		{ "ints, small and big", test_ints },
		{ "ints past 4300 digits", test_int_digit_limit },
		{ "containers", test_containers },
		{ "depth limit", test_depth_limit },
		{ "value budget", test_value_budget },
		{ "printable table edges", test_printable_table },
	};

	return UNIT_RUN("repr", tests, NULL, NULL);
}
